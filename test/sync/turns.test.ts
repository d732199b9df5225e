import { afterEach, describe, expect, it } from 'vitest'
import { systemEnv } from '../../sync/core/env.ts'
import { nextTurn, TURN_BUDGET_MS, turnsWaiting } from '../../sync/core/turns.ts'

/**
 * The event loop's check phase, by hand: `setImmediate` callbacks are collected, and one
 * iteration runs those queued before it started (what Node does), draining microtasks after
 * each, as Node does between immediates.
 */
function manualLoop() {
  const real = globalThis.setImmediate
  let queued: Array<() => void> = []
  ;(globalThis as { setImmediate: unknown }).setImmediate = (fn: () => void) => void queued.push(fn)
  return {
    async iteration() {
      const now = queued
      queued = []
      for (const fn of now) {
        fn()
        // Microtasks (the resumed slice's synchronous part) run before the next immediate.
        for (let i = 0; i < 5; i++) await Promise.resolve()
      }
    },
    restore: () => ((globalThis as { setImmediate: unknown }).setImmediate = real),
  }
}

let loop: ReturnType<typeof manualLoop> | undefined
afterEach(() => loop?.restore())

/** Holds the thread for `ms`, as a slice of real work does. */
function busy(ms: number) {
  const end = performance.now() + ms
  while (performance.now() < end);
}

/** A sliced workload: logs the iteration each slice runs in, waiting for a turn between slices. */
async function sliced(name: string, slices: number, sliceMs: number, yieldFn: () => Promise<void>, log: string[], iteration: () => number) {
  for (let i = 0; i < slices; i++) {
    log.push(`${name}${i}@${iteration()}`)
    busy(sliceMs)
    await yieldFn()
  }
}

describe('turns of the event loop', () => {
  it('gives a long slice an iteration of its own, in the order the slices asked, whether they wait through the system env or nextTurn', async () => {
    loop = manualLoop()
    let it = 0
    const log: string[] = []
    // Two workloads slicing at once, as a sync step's check stage and the previous step's apply do.
    const a = sliced(
      'a',
      3,
      TURN_BUDGET_MS + 1,
      () => systemEnv.yield!(),
      log,
      () => it,
    )
    const b = sliced('b', 3, TURN_BUDGET_MS + 1, nextTurn, log, () => it)
    for (it = 1; it <= 8; it++) await loop.iteration()
    await Promise.all([a, b])
    // With a bare setImmediate per wait, a1 and b1 would share iteration 1, a2 and b2 iteration 2.
    expect(log).toEqual(['a0@0', 'b0@0', 'a1@1', 'b1@2', 'a2@3', 'b2@4'])
    expect(turnsWaiting()).toBe(0)
  })

  it('lets short slices share an iteration', async () => {
    loop = manualLoop()
    let it = 0
    const log: string[] = []
    const runs = ['a', 'b', 'c'].map((n) => sliced(n, 2, 0, nextTurn, log, () => it))
    for (it = 1; it <= 3; it++) await loop.iteration()
    await Promise.all(runs)
    expect(log).toEqual(['a0@0', 'b0@0', 'c0@0', 'a1@1', 'b1@1', 'c1@1'])
  })

  it('goes on after the queue ran empty', async () => {
    loop = manualLoop()
    let resumed = 0
    void nextTurn().then(() => resumed++)
    await loop.iteration()
    expect(resumed).toBe(1)
    void nextTurn().then(() => resumed++)
    void nextTurn().then(() => resumed++)
    await loop.iteration()
    expect(resumed).toBe(3)
    await loop.iteration()
    expect(turnsWaiting()).toBe(0)
  })
})
