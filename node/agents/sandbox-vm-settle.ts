import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten'
import { SHARED, stopMessage, type StopReason } from './sandbox-vm-contract.ts'
import { errorText, toJsonText } from './sandbox-vm-marshal.ts'

/** This file is loaded by the sandbox thread without tsx (see sandbox-vm.ts): erasable TypeScript only. */

/** The program's result: a plain value, or a promise driven to settlement (jobs, host calls, a stop). */
export async function settle(
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
