import type { QuickJSWASMModule } from 'quickjs-emscripten'
import { SHARED, STOP_TIMEOUT, stopMessage, type HostCall, type StopReason, type VmBudgets, type VmResult, type VmRun } from './sandbox-vm-contract.ts'
import { errorText, fromJsonText, memoryPages } from './sandbox-vm-marshal.ts'
import { settle } from './sandbox-vm-settle.ts'

/**
 * One program run inside QuickJS, on the sandbox thread (sandbox-thread.ts). This file and its
 * parts (sandbox-vm-contract.ts, sandbox-vm-marshal.ts, sandbox-vm-settle.ts) are what the
 * thread loads without tsx, so they are erasable TypeScript only (no parameter properties,
 * enums or namespaces) and import nothing of the daemon but types.
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
