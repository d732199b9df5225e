import { getQuickJS, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten'
import type { Env } from '../../sync/core/env.ts'
import type { Json } from '../../sync/crdt/ops.ts'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import type { RunEnvelope } from '../../sync/modules/agents/record.ts'

/**
 * Programs run in QuickJS compiled to WebAssembly (quickjs-emscripten), never in the daemon's
 * own realm: the sandbox's globals are QuickJS's standard library only (no `process`,
 * `require`, `fetch`, fs or timers), and the program reaches the world only through the
 * `svc` object built here from the capabilities the host passes in.
 *
 * Budgets of one run:
 * - fuel: QuickJS calls the interrupt handler every few thousand bytecode steps; each call is
 *   one unit of fuel (`fuelUsed`), and the run is interrupted once `fuel` units are spent;
 * - memory: the runtime's allocator limit (`memoryBytes`); an allocation past it throws
 *   `out of memory` inside the program;
 * - time: `timeoutMs` on the injected clock, checked by the interrupt handler while the
 *   program computes and by a timer while it awaits a capability;
 * - cost: model calls count `costUsd`, and a call once `maxCostUsd` is spent is refused (the
 *   capability itself checks, capabilities.ts).
 */

/** A host function the program calls as `await svc.<name>(arg)`; its result must be JSON. */
export type Capability = (arg: Json) => Promise<Json>

export interface RunBudgets {
  fuel: number
  memoryBytes: number
  timeoutMs: number
}

export interface SandboxRun {
  source: string
  args: Json
  capabilities: Readonly<Record<string, Capability>>
  budgets: RunBudgets
  env: Env
  /** The run id (`traceRef`). */
  runId: string
}

/** A run's envelope plus what the rollups need besides. */
export interface SandboxResult extends RunEnvelope {
  memPages: number
  trace: string[]
}

let wasm: Promise<QuickJSWASMModule> | undefined
/** The WebAssembly module is compiled once per process; every run gets a fresh runtime and context. */
export const quickjs = (): Promise<QuickJSWASMModule> => (wasm ??= getQuickJS())

/**
 * Builds `svc` inside the sandbox from one host entry point, then removes that entry point
 * from the global object. Arguments and results cross as JSON text, so no host object (and no
 * host prototype) ever enters the sandbox.
 */
const PRELUDE = `(() => {
  const call = globalThis.__svcHost; delete globalThis.__svcHost
  const log = globalThis.__svcLog; delete globalThis.__svcLog
  const via = (name) => (arg) => call(name, JSON.stringify(arg === undefined ? null : arg)).then((s) => JSON.parse(s))
  const names = JSON.parse(globalThis.__svcNames); delete globalThis.__svcNames
  const svc = {}
  for (const n of names) svc[n] = via(n)
  globalThis.svc = Object.freeze(svc)
  const show = (v) => typeof v === 'string' ? v : (() => { try { return JSON.stringify(v) } catch { return String(v) } })()
  globalThis.console = Object.freeze({ log: (...a) => log(a.map(show).join(' ')) })
})()`

export async function runSandboxed(run: SandboxRun): Promise<SandboxResult> {
  const QuickJS = await quickjs()
  const { env, budgets } = run
  const started = env.now()
  const deadline = started + budgets.timeoutMs
  const trace: string[] = []
  let traceBytes = 0
  let fuelUsed = 0
  let stop: 'fuel' | 'timeout' | undefined
  const rt = QuickJS.newRuntime()
  rt.setMemoryLimit(budgets.memoryBytes)
  rt.setMaxStackSize(AGENT_LIMITS.stackBytes)
  rt.setInterruptHandler(() => {
    fuelUsed++
    if (fuelUsed > budgets.fuel) stop ??= 'fuel'
    else if (env.now() > deadline) stop ??= 'timeout'
    return stop !== undefined
  })
  const vm = rt.newContext()
  const finish = (status: 'ok' | 'failed', value: Json, error: string | null): SandboxResult => ({
    status, traceRef: run.runId, durationMs: Math.max(0, env.now() - started), fuelUsed: Math.min(fuelUsed, budgets.fuel), value, error, memPages: memoryPages(vm, rt), trace,
  })
  // Host calls in flight: each settles a deferred promise in the sandbox and wakes the loop.
  let inFlight = 0
  let wake: () => void = () => undefined
  const deferreds = new Set<{ dispose(): void }>()
  try {
    const log = vm.newFunction('__svcLog', (line) => {
      const s = vm.getString(line)
      if (traceBytes < AGENT_LIMITS.traceInlineBytes) trace.push(s.slice(0, AGENT_LIMITS.traceInlineBytes - traceBytes))
      traceBytes += s.length
    })
    vm.setProp(vm.global, '__svcLog', log)
    log.dispose()
    const host = vm.newFunction('__svcHost', (nameH, argH) => {
      const name = vm.getString(nameH)
      const argText = vm.getString(argH)
      const deferred = vm.newPromise()
      deferreds.add(deferred)
      const cap = Object.hasOwn(run.capabilities, name) ? run.capabilities[name] : undefined
      inFlight++
      const settle = (fn: () => void) => {
        inFlight--
        if (vm.alive && deferred.alive) fn()
        deferreds.delete(deferred)
        wake()
      }
      Promise.resolve()
        .then(() => (cap ? cap(JSON.parse(argText) as Json) : Promise.reject(new Error(`no capability ${name}`))))
        .then(
          (value) => settle(() => {
            const s = vm.newString(JSON.stringify(value ?? null))
            deferred.resolve(s)
            s.dispose()
          }),
          (err: unknown) => settle(() => {
            const e = vm.newError({ name: 'CapabilityError', message: err instanceof Error ? err.message : String(err) })
            deferred.reject(e)
            e.dispose()
          }),
        )
      return deferred.handle
    })
    vm.setProp(vm.global, '__svcHost', host)
    host.dispose()
    const names = vm.newString(JSON.stringify(Object.keys(run.capabilities)))
    vm.setProp(vm.global, '__svcNames', names)
    names.dispose()
    vm.unwrapResult(vm.evalCode(PRELUDE, 'prelude.js')).dispose()

    const loaded = vm.evalCode(run.source, 'program.js', { type: 'global' })
    if (loaded.error) return finish('failed', null, errorText(vm, loaded.error, stop))
    loaded.value.dispose()
    const main = vm.getProp(vm.global, 'main')
    if (vm.typeof(main) !== 'function') {
      main.dispose()
      return finish('failed', null, 'the program defines no function main(args)')
    }
    const argsH = fromJson(vm, run.args)
    const svcH = vm.getProp(vm.global, 'svc')
    const called = vm.callFunction(main, vm.undefined, argsH, svcH)
    main.dispose()
    argsH.dispose()
    svcH.dispose()
    if (called.error) return finish('failed', null, errorText(vm, called.error, stop))
    const outcome = await settlePromise(vm, rt, called.value, env, deadline, () => inFlight, (fn) => (wake = fn), () => stop)
    if (outcome.error !== undefined) return finish('failed', null, outcome.error)
    return finish('ok', outcome.value, null)
  } catch (err) {
    return finish('failed', null, stop ? stopMessage(stop) : (err as Error).message)
  } finally {
    // Host calls still in flight when the run ends settle into nothing.
    for (const d of deferreds) d.dispose()
    deferreds.clear()
    inFlight = 0
    vm.dispose()
    rt.dispose()
  }
}

/** The program's result: a plain value, or a promise driven to settlement (jobs, host calls, the deadline). */
async function settlePromise(
  vm: QuickJSContext,
  rt: QuickJSRuntime,
  handle: QuickJSHandle,
  env: Env,
  deadline: number,
  inFlight: () => number,
  onWake: (fn: () => void) => void,
  stopped: () => 'fuel' | 'timeout' | undefined,
): Promise<{ value: Json; error?: undefined } | { error: string }> {
  try {
    for (;;) {
      const jobs = rt.executePendingJobs()
      if (jobs.error) {
        const e = errorText(vm, jobs.error, stopped())
        return { error: e }
      }
      const state = vm.getPromiseState(handle)
      if (state.type === 'fulfilled') {
        const value = toJson(vm, state.value)
        if (!state.notAPromise) state.value.dispose()
        return { value }
      }
      if (state.type === 'rejected') return { error: errorText(vm, state.error, stopped()) }
      if (stopped()) return { error: stopMessage(stopped()!) }
      if (rt.hasPendingJob()) continue
      // Waiting on the host: nothing in flight means the program awaits something that never settles.
      if (inFlight() === 0) return { error: 'the program awaits a promise nothing will settle' }
      const left = deadline - env.now()
      if (left <= 0) return { error: stopMessage('timeout') }
      let cancel = () => undefined as void
      const timedOut = await new Promise<boolean>((resolve) => {
        onWake(() => resolve(false))
        cancel = env.setTimer(left, () => resolve(true))
      })
      cancel()
      if (timedOut) return { error: stopMessage('timeout') }
    }
  } finally {
    if (handle.alive) handle.dispose()
  }
}

const stopMessage = (stop: 'fuel' | 'timeout') => (stop === 'fuel' ? 'fuel exhausted: the run used its whole fuel budget' : 'timeout: the run passed its time budget')

/** The message of a thrown value (the handle is disposed); an interrupt says which budget stopped it. */
function errorText(vm: QuickJSContext, h: QuickJSHandle, stop: 'fuel' | 'timeout' | undefined): string {
  try {
    const d = vm.dump(h) as unknown
    if (stop && d && typeof d === 'object' && (d as { message?: unknown }).message === 'interrupted') return stopMessage(stop)
    if (d && typeof d === 'object' && typeof (d as { message?: unknown }).message === 'string') {
      const e = d as { name?: string; message: string }
      return e.name && e.name !== 'Error' ? `${e.name}: ${e.message}` : e.message
    }
    return typeof d === 'string' ? d : JSON.stringify(d) ?? String(d)
  } catch {
    return 'the program threw a value that cannot be shown'
  } finally {
    h.dispose()
  }
}

/** A JSON value made inside the sandbox by its own JSON.parse (no host object crosses). */
function fromJson(vm: QuickJSContext, v: Json): QuickJSHandle {
  const text = vm.newString(JSON.stringify(v ?? null))
  const json = vm.getProp(vm.global, 'JSON')
  const parse = vm.getProp(json, 'parse')
  const res = vm.callFunction(parse, json, text)
  text.dispose()
  parse.dispose()
  json.dispose()
  return vm.unwrapResult(res)
}

/** A sandbox value as JSON, through the sandbox's own JSON.stringify (undefined becomes null). */
function toJson(vm: QuickJSContext, h: QuickJSHandle): Json {
  const json = vm.getProp(vm.global, 'JSON')
  const stringify = vm.getProp(json, 'stringify')
  const res = vm.callFunction(stringify, json, h)
  stringify.dispose()
  json.dispose()
  if (res.error) {
    res.error.dispose()
    return null
  }
  const s = vm.typeof(res.value) === 'string' ? vm.getString(res.value) : undefined
  res.value.dispose()
  if (s === undefined) return null
  if (s.length > AGENT_LIMITS.valueBytes) return { truncated: true, bytes: s.length }
  return JSON.parse(s) as Json
}

/** WebAssembly pages (64 KiB) the runtime holds, from its own accounting. */
function memoryPages(vm: QuickJSContext, rt: QuickJSRuntime): number {
  try {
    const h = rt.computeMemoryUsage()
    const usage = vm.dump(h) as { memory_used_size?: number }
    h.dispose()
    return Math.ceil((usage.memory_used_size ?? 0) / 65536)
  } catch {
    return 0
  }
}
