import { nextTurn } from '../../sync/core/turns.ts'
import type { Timer } from '../../sync/protocol/sync-driver.ts'

/** Head sync's clock on Node: timers that do not keep the process alive, and the process's turns. */
export const realTimer: Timer = {
  after(ms, fn) {
    const t = setTimeout(fn, ms)
    t.unref?.()
    return () => clearTimeout(t)
  },
  yield: nextTurn,
}
