/**
 * Turns of the event loop, shared by every sliced workload in the process.
 *
 * Long work (an ingest's check and apply stages, a peer's frames, query scans) runs in slices of
 * a few milliseconds and waits for a turn between two slices, so the HTTP API, timers and other
 * peers run in between. With a bare `setImmediate` per wait, every waiting slice resumes in the
 * same check phase of the loop: an iteration runs one slice of each workload back to back (while
 * a sync step applies, the next step's check stage slices too), and a request that arrives waits
 * for all of them. Here the waiting slices form one queue, and a check phase resumes them in
 * order only until TURN_BUDGET_MS has gone by since it started: the rest wait, first in line, for
 * the next iteration. A long slice has an iteration to itself, short ones (a peer's few frames)
 * share one, and every workload still gets its turn in order.
 *
 * Only for code that yields for the event loop's sake: a wait for a timer or for I/O stays what
 * it is. The queue is the process's (a page's), like the event loop it protects.
 */
export const TURN_BUDGET_MS = 10

const waiting: Array<() => void> = []
let phaseStart = 0
let markerQueued = false

/** Resolves in a later event-loop iteration, after the slices that asked before it. */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve)
    queueSlot()
  })
}

/** Slices waiting for a turn (for tests and diagnostics). */
export function turnsWaiting(): number {
  return waiting.length
}

// One slot per waiting slice, each behind the marker of the check phase it runs in: immediates
// queued during a check phase run in the next one, in the order they were queued, and Node runs
// the microtasks a slot starts (the resumed slice) before the next slot.
function queueSlot() {
  if (!markerQueued) {
    markerQueued = true
    later(() => {
      markerQueued = false
      phaseStart = performance.now()
    })
  }
  later(slot)
}

function slot() {
  if (waiting.length === 0) return
  // Over budget: the slice first in line keeps its place for the next iteration.
  if (performance.now() - phaseStart >= TURN_BUDGET_MS) queueSlot()
  else waiting.shift()!()
}

// Looked up on every call: a page installs its own `setImmediate` (sync/browser/env.ts), and a
// host without either still gets a macrotask.
function later(fn: () => void) {
  if (typeof setImmediate === 'function') setImmediate(fn)
  else setTimeout(fn, 0)
}
