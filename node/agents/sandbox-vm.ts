import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten'

/**
 * One program run inside QuickJS, on the sandbox thread (sandbox-thread.ts). This file is
 * what the thread loads without tsx, so it is erasable TypeScript only (no parameter
 * properties, enums or namespaces) and imports nothing of the daemon but types.
 *
 * Budgets enforced here:
 * - fuel: QuickJS calls the interrupt handler every few thousand bytecode steps, and also,
 *   more sparsely, from inside the regex engine. A unit of fuel is one such call or
 *   `fuelUnitUs` of this thread's CPU time, whichever adds up to more; so a loop of cheap
 *   steps is counted by its steps, and a call that does much native work between two checks
 *   (a backtracking regex, an allocation that makes the collector run) is counted by the time
 *   it takes. The run stops once `fuel` units are spent.
 * - memory: the runtime's allocator limit; an allocation past it throws `out of memory`.
 * - stop: a flag the daemon sets in shared memory (its time budget, or its shutdown); the
 *   interrupt handler reads it, so a computing program stops at the next check.
 */

export interface VmBudgets {
  fuel: number
  fuelUnitUs: number
  memoryBytes: number
  stackBytes: number
  /** Trace kept inline, in characters. */
  traceBytes: number
  /** A returned value's JSON text above this many characters is replaced by its size. */
  valueBytes: number
}

export interface VmRun {
  source: string
  /** The args, as JSON text the daemon depth-checked. */
  argsText: string
  /** Capability names: `svc.<name>`. */
  names: string[]
  budgets: VmBudgets
}

/** Shared with the daemon (Int32Array over a SharedArrayBuffer): see SHARED below. */
export const SHARED = {
  /** Set to a STOP_* code by the daemon; read by the interrupt handler. */
  stop: 0,
  /** Fuel spent so far in the current run (what the daemon reports if it must kill the thread). */
  fuel: 1,
  /** Bumped at every interrupt check: the daemon sees a thread stuck in one native call. */
  beat: 2,
  /** 1 while the program computes, 0 while it waits for a capability or no run is on. */
  busy: 3,
  length: 4,
} as const

export const STOP_TIMEOUT = 1

export type StopReason = 'fuel' | 'timeout'

export interface VmResult {
  status: 'ok' | 'failed'
  /** The returned value's JSON text (`null` when there is none). */
  valueText: string
  error: string | null
  fuelUsed: number
  memPages: number
  trace: string[]
  /**
   * QuickJS aborted while tearing the run down (a leak inside QuickJS, seen after a deep
   * `JSON.stringify` overflowed its stack): the result stands, but this WebAssembly instance is
   * no longer sound, so the thread must be replaced.
   */
  teardownFailed?: string
}

/** The host side of capability calls: JSON text in, JSON text out (or a rejection with a message). */
export type HostCall = (name: string, argText: string) => Promise<string>

/**
 * Builds `svc` inside the sandbox from one host entry point. The prelude runs when a runtime is
 * prepared (before the run is known) and leaves one installer, which the host calls with the
 * run's capability names just before the program loads; the installer and both host entry
 * points are gone from the global object by then. Arguments and results cross as JSON text, so
 * no host object (and no host prototype) ever enters the sandbox.
 */
const PRELUDE = `(() => {
  const call = globalThis.__svcHost; delete globalThis.__svcHost
  const log = globalThis.__svcLog; delete globalThis.__svcLog
  const via = (name) => (arg) => call(name, JSON.stringify(arg === undefined ? null : arg)).then((s) => JSON.parse(s))
  const show = (v) => typeof v === 'string' ? v : (() => { try { return JSON.stringify(v) } catch { return String(v) } })()
  globalThis.console = Object.freeze({ log: (...a) => log(a.map(show).join(' ')) })
  globalThis.__svcInstall = (namesText) => {
    delete globalThis.__svcInstall
    const svc = {}
    for (const n of JSON.parse(namesText)) svc[n] = via(n)
    globalThis.svc = Object.freeze(svc)
  }
})()`

const cpuUs = (): number => {
  const u = process.threadCpuUsage()
  return u.user + u.system
}

/** What one run of a prepared runtime tracks; the runtime's handlers read the current one. */
interface RunState {
  budgets: VmBudgets
  trace: string[]
  traceBytes: number
  calls: number
  fuelUsed: number
  cpu0: number
  stop: StopReason | undefined
  host: HostCall
  inFlight: number
  wake: () => void
  deferreds: Set<{ dispose(): void; alive: boolean }>
}

/**
 * A fresh QuickJS runtime and context with the prelude evaluated, made while the thread waits
 * for its next run (so a run pays only for its own program), used by exactly one run and torn
 * down after it.
 */
export interface PreparedVm {
  readonly memoryBytes: number
  run(run: VmRun, host: HostCall, onWaiting: (wake: (() => void) | undefined) => void): Promise<VmResult>
  /** Frees the runtime; the message when QuickJS aborts doing so (the instance is then unsound). */
  teardown(): string | undefined
}

export function prepareVm(QuickJS: QuickJSWASMModule, memoryBytes: number, stackBytes: number, shared: Int32Array): PreparedVm {
  let cur: RunState | undefined
  const stopped = (): StopReason | undefined => {
    if (!cur) return undefined
    if (cur.stop === undefined && Atomics.load(shared, SHARED.stop) === STOP_TIMEOUT) cur.stop = 'timeout'
    return cur.stop
  }
  const rt = QuickJS.newRuntime()
  rt.setMemoryLimit(memoryBytes)
  rt.setMaxStackSize(stackBytes)
  rt.setInterruptHandler(() => {
    const r = cur
    if (!r) return false
    r.calls++
    r.fuelUsed = Math.max(r.calls, Math.floor((cpuUs() - r.cpu0) / r.budgets.fuelUnitUs))
    Atomics.store(shared, SHARED.fuel, Math.min(r.fuelUsed, r.budgets.fuel))
    Atomics.add(shared, SHARED.beat, 1)
    if (r.fuelUsed > r.budgets.fuel) r.stop ??= 'fuel'
    return stopped() !== undefined
  })
  const vm = rt.newContext()
  const log = vm.newFunction('__svcLog', (line) => {
    const r = cur
    if (!r) return
    const s = vm.getString(line)
    if (r.traceBytes < r.budgets.traceBytes) r.trace.push(s.slice(0, r.budgets.traceBytes - r.traceBytes))
    r.traceBytes += s.length
  })
  vm.setProp(vm.global, '__svcLog', log)
  log.dispose()
  const hostFn = vm.newFunction('__svcHost', (nameH, argH) => {
    const r = cur!
    const name = vm.getString(nameH)
    const argText = vm.getString(argH)
    const deferred = vm.newPromise()
    r.deferreds.add(deferred)
    r.inFlight++
    const settleCall = (fn: () => void) => {
      r.inFlight--
      if (vm.alive && deferred.alive) fn()
      r.deferreds.delete(deferred)
      r.wake()
    }
    r.host(name, argText).then(
      (text) =>
        settleCall(() => {
          const s = vm.newString(text)
          deferred.resolve(s)
          s.dispose()
        }),
      (err: unknown) =>
        settleCall(() => {
          const e = vm.newError({ name: 'CapabilityError', message: err instanceof Error ? err.message : String(err) })
          deferred.reject(e)
          e.dispose()
        }),
    )
    return deferred.handle
  })
  vm.setProp(vm.global, '__svcHost', hostFn)
  hostFn.dispose()
  vm.unwrapResult(vm.evalCode(PRELUDE, 'prelude.js')).dispose()

  let used = false
  return {
    memoryBytes,
    async run(run, host, onWaiting) {
      if (used) throw new Error('a prepared runtime runs one program')
      used = true
      const { budgets } = run
      const r: RunState = {
        budgets,
        trace: [],
        traceBytes: 0,
        calls: 0,
        fuelUsed: 0,
        cpu0: cpuUs(),
        stop: undefined,
        host,
        inFlight: 0,
        wake: () => undefined,
        deferreds: new Set(),
      }
      cur = r
      const finish = (status: 'ok' | 'failed', valueText: string, error: string | null): VmResult => ({
        status,
        valueText,
        error,
        fuelUsed: Math.min(r.fuelUsed, budgets.fuel),
        memPages: memoryPages(vm, rt),
        trace: r.trace,
      })
      try {
        const install = vm.getProp(vm.global, '__svcInstall')
        const names = vm.newString(JSON.stringify(run.names))
        const installed = vm.callFunction(install, vm.undefined, names)
        install.dispose()
        names.dispose()
        vm.unwrapResult(installed).dispose()

        Atomics.store(shared, SHARED.busy, 1)
        const loaded = vm.evalCode(run.source, 'program.js', { type: 'global' })
        if (loaded.error) return finish('failed', 'null', errorText(vm, loaded.error, stopped()))
        loaded.value.dispose()
        const main = vm.getProp(vm.global, 'main')
        if (vm.typeof(main) !== 'function') {
          main.dispose()
          return finish('failed', 'null', 'the program defines no function main(args)')
        }
        const args = fromJsonText(vm, run.argsText)
        if (args.error !== undefined) {
          main.dispose()
          return finish('failed', 'null', `args: ${args.error}`)
        }
        const svcH = vm.getProp(vm.global, 'svc')
        const called = vm.callFunction(main, vm.undefined, args.handle, svcH)
        main.dispose()
        args.handle.dispose()
        svcH.dispose()
        if (called.error) return finish('failed', 'null', errorText(vm, called.error, stopped()))
        const outcome = await settle(
          vm,
          rt,
          called.value,
          shared,
          () => r.inFlight,
          (fn) => (r.wake = fn),
          stopped,
          onWaiting,
          budgets.valueBytes,
        )
        if (outcome.error !== undefined) return finish('failed', 'null', outcome.error)
        return finish('ok', outcome.valueText, null)
      } catch (err) {
        const s = stopped()
        // A recursion deep enough to exhaust the thread's own stack before QuickJS's check fires.
        const message = err instanceof RangeError ? `stack overflow (${err.message})` : (err as Error).message
        return finish('failed', 'null', s ? stopMessage(s) : message)
      } finally {
        Atomics.store(shared, SHARED.busy, 0)
        onWaiting(undefined)
      }
    },
    teardown() {
      try {
        // Host calls still in flight when the run ended settle into nothing.
        if (cur) for (const d of cur.deferreds) if (d.alive) d.dispose()
        cur = undefined
        vm.dispose()
        rt.dispose()
        return undefined
      } catch (err) {
        return err instanceof Error ? err.message : String(err)
      }
    },
  }
}

/** Prepares, runs and tears down in one go (the thread prepares ahead instead). */
export async function runInVm(QuickJS: QuickJSWASMModule, run: VmRun, shared: Int32Array, host: HostCall, onWaiting: (wake: (() => void) | undefined) => void): Promise<VmResult> {
  const p = prepareVm(QuickJS, run.budgets.memoryBytes, run.budgets.stackBytes, shared)
  const result = await p.run(run, host, onWaiting)
  const failed = p.teardown()
  if (failed !== undefined) result.teardownFailed = failed
  return result
}

/** The program's result: a plain value, or a promise driven to settlement (jobs, host calls, a stop). */
async function settle(
  vm: QuickJSContext,
  rt: QuickJSRuntime,
  handle: QuickJSHandle,
  shared: Int32Array,
  inFlight: () => number,
  onWake: (fn: () => void) => void,
  stopped: () => StopReason | undefined,
  onWaiting: (wake: (() => void) | undefined) => void,
  valueBytes: number,
): Promise<{ valueText: string; error?: undefined } | { error: string }> {
  try {
    for (;;) {
      const jobs = rt.executePendingJobs()
      if (jobs.error) return { error: errorText(vm, jobs.error, stopped()) }
      const state = vm.getPromiseState(handle)
      if (state.type === 'fulfilled') {
        const valueText = toJsonText(vm, state.value, valueBytes)
        if (!state.notAPromise) state.value.dispose()
        return { valueText }
      }
      if (state.type === 'rejected') return { error: errorText(vm, state.error, stopped()) }
      const s = stopped()
      if (s) return { error: stopMessage(s) }
      if (rt.hasPendingJob()) continue
      // Waiting on the host: nothing in flight means the program awaits something that never settles.
      if (inFlight() === 0) return { error: 'the program awaits a promise nothing will settle' }
      Atomics.store(shared, SHARED.busy, 0)
      await new Promise<void>((resolve) => {
        onWake(resolve)
        // The daemon's stop message wakes the wait too (its time budget ran out).
        onWaiting(resolve)
      })
      onWaiting(undefined)
      Atomics.store(shared, SHARED.busy, 1)
    }
  } finally {
    if (handle.alive) handle.dispose()
  }
}

export const stopMessage = (stop: StopReason): string => (stop === 'fuel' ? 'fuel exhausted: the run used its whole fuel budget' : 'timeout: the run passed its time budget')

/** The message of a thrown value (the handle is disposed); an interrupt says which budget stopped it. */
function errorText(vm: QuickJSContext, h: QuickJSHandle, stop: StopReason | undefined): string {
  try {
    const d = vm.dump(h) as unknown
    if (stop && d && typeof d === 'object' && (d as { message?: unknown }).message === 'interrupted') return stopMessage(stop)
    if (d && typeof d === 'object' && typeof (d as { message?: unknown }).message === 'string') {
      const e = d as { name?: string; message: string }
      return e.name && e.name !== 'Error' ? `${e.name}: ${e.message}` : e.message
    }
    return typeof d === 'string' ? d : (JSON.stringify(d) ?? String(d))
  } catch {
    return 'the program threw a value that cannot be shown'
  } finally {
    if (h.alive) h.dispose()
  }
}

/**
 * A JSON value made inside the sandbox by its own JSON.parse (no host object crosses). A parse
 * that fails (it cannot, for text the daemon checked, but a failure must not leave a handle
 * behind: a live handle at teardown aborts QuickJS) disposes its error and says why.
 */
function fromJsonText(vm: QuickJSContext, text: string): { handle: QuickJSHandle; error?: undefined } | { error: string } {
  const textH = vm.newString(text)
  const json = vm.getProp(vm.global, 'JSON')
  const parse = vm.getProp(json, 'parse')
  const res = vm.callFunction(parse, json, textH)
  textH.dispose()
  parse.dispose()
  json.dispose()
  if (res.error) return { error: errorText(vm, res.error, undefined) }
  return { handle: res.value }
}

/** A sandbox value as JSON text, through the sandbox's own JSON.stringify (undefined becomes null). */
function toJsonText(vm: QuickJSContext, h: QuickJSHandle, valueBytes: number): string {
  const json = vm.getProp(vm.global, 'JSON')
  const stringify = vm.getProp(json, 'stringify')
  const res = vm.callFunction(stringify, json, h)
  stringify.dispose()
  json.dispose()
  if (res.error) {
    res.error.dispose()
    return 'null'
  }
  const s = vm.typeof(res.value) === 'string' ? vm.getString(res.value) : undefined
  res.value.dispose()
  if (s === undefined) return 'null'
  if (s.length > valueBytes) return JSON.stringify({ truncated: true, bytes: s.length })
  return s
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
