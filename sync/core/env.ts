import { nextTurn } from './turns.ts'

/**
 * Everything nondeterministic enters sync/ through this environment: the daemon passes the
 * real clock, timers and CSPRNG, the simulator a virtual clock, its event queue and a seeded
 * PRNG, so a seed replays a run exactly. Nothing in sync/ calls `Date`, `setTimeout` or
 * `crypto.getRandomValues` itself.
 */
export interface Env {
  /** Milliseconds since the Unix epoch. */
  now(): number
  /** `n` random bytes. Key material in the daemon; seeded in the simulator. */
  randomBytes(n: number): Uint8Array
  /**
   * Runs `fn` once, `ms` from now on this env's clock; returns the function that cancels it.
   * A `background` timer (housekeeping, such as freeing memory after a long pause) does not by
   * itself keep a Node process alive.
   */
  setTimer(ms: number, fn: () => void, background?: boolean): () => void
  /**
   * Gives the event loop a turn (a macrotask): long work (a large ingest) calls it every few
   * milliseconds so timers, the HTTP API and other peers run in between. The system env's turns
   * are the process's (turns.ts): an iteration resumes waiting slices, in order, for about 10 ms.
   * Absent where events run one at a time (the simulator): there nothing waits, and work is
   * never cut.
   */
  yield?(): Promise<void>
}

export const systemEnv: Env = {
  now: () => Date.now(),
  randomBytes: (n) => globalThis.crypto.getRandomValues(new Uint8Array(n)),
  setTimer: (ms, fn, background) => {
    const timer = setTimeout(fn, ms)
    // A number in a browser, which has no process to keep alive.
    if (background && typeof timer === 'object') timer.unref()
    return () => clearTimeout(timer)
  },
  // Slices of every workload share the loop's iterations (turns.ts says why).
  yield: nextTurn,
}
