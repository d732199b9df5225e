import type { Env } from '../core/env.ts'
import type { Timer } from '../protocol/sync-driver.ts'

/**
 * A macrotask turn in a page. Not `setTimeout(0)`: browsers clamp nested zero timers to 4 ms,
 * so a long ingest that yields every few milliseconds would spend most of its time asleep. A
 * MessageChannel message runs as the next task with no clamp (the way schedulers in UI
 * libraries yield).
 */
export function macrotask(): Promise<void> {
  return new Promise<void>((resolve) => {
    const ch = new MessageChannel()
    ch.port1.onmessage = () => {
      ch.port1.close()
      resolve()
    }
    ch.port2.postMessage(null)
  })
}

/** The page's clock, timers and CSPRNG (sync/core/env.ts says why they come through here). */
export const browserEnv: Env = {
  now: () => Date.now(),
  randomBytes: (n) => globalThis.crypto.getRandomValues(new Uint8Array(n)),
  setTimer: (ms, fn) => {
    const t = setTimeout(fn, ms)
    return () => clearTimeout(t)
  },
  yield: macrotask,
}

/** The sync driver's timer in a page. */
export const browserTimer: Timer = {
  after(ms, fn) {
    const t = setTimeout(fn, ms)
    return () => clearTimeout(t)
  },
  yield: macrotask,
}

/**
 * The daemon's libp2p transport (sync/p2p/libp2p-transport.ts), which the page runs unchanged
 * so both ends frame and bound head sync identically, yields between batches of frames with
 * `setImmediate`, which pages lack. The same macrotask stands in for it.
 */
export function installSetImmediate(): void {
  const g = globalThis as { setImmediate?: (fn: () => void) => unknown }
  if (typeof g.setImmediate === 'function') return
  g.setImmediate = (fn: () => void) => void macrotask().then(fn)
}
