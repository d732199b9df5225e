import { describe, expect, it } from 'vitest'
import { Redialer } from '../../sync/p2p/redialer.ts'

/** Virtual time: timers fire only when the test advances the clock; promises settle in between. */
function virtualTime() {
  let now = 0
  const timers: Array<{ at: number; fn: () => void; live: boolean }> = []
  const flush = () => new Promise((r) => setTimeout(r, 0))
  return {
    now: () => now,
    timer: {
      after(ms: number, fn: () => void) {
        const t = { at: now + ms, fn, live: true }
        timers.push(t)
        return () => void (t.live = false)
      },
    },
    async advance(ms: number) {
      const end = now + ms
      for (;;) {
        await flush()
        const due = timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0]
        if (!due) break
        now = due.at
        due.live = false
        due.fn()
      }
      now = end
      await flush()
    },
    live: () => timers.filter((t) => t.live).length,
  }
}

function setup() {
  const vt = virtualTime()
  const dials: number[] = []
  let up = false
  let reachable = false
  const r = new Redialer({
    dial: async () => {
      dials.push(vt.now())
      if (!reachable) throw new Error('connect ECONNREFUSED')
      up = true
    },
    isConnected: () => up,
    timer: vt.timer,
    now: vt.now,
    baseMs: 100,
    maxMs: 1_000,
  })
  return { r, vt, dials, setUp: (v: boolean) => (up = v), setReachable: (v: boolean) => (reachable = v) }
}

describe('Redialer', () => {
  it('dials at once, then after base, 2 base, 4 base ... capped, while dials fail', async () => {
    const { r, vt, dials } = setup()
    r.watch('P', '/ip4/127.0.0.1/tcp/1/p2p/P')
    await vt.advance(4_000)
    expect(dials).toEqual([0, 100, 300, 700, 1_500, 2_500, 3_500])
    expect(r.state('P')).toMatchObject({ failures: 7, lastError: 'connect ECONNREFUSED', nextDialAt: 4_500 })
  })

  it('a connection resets the delay; a drop redials from the base delay', async () => {
    const { r, vt, dials, setUp, setReachable } = setup()
    r.watch('P', 'addr')
    await vt.advance(700)
    setReachable(true)
    await vt.advance(800)
    expect(dials).toEqual([0, 100, 300, 700, 1_500])
    expect(r.state('P')).toEqual({ failures: 0, lastError: null, nextDialAt: null })
    expect(vt.live()).toBe(0)
    // The peer restarts: the connection drops, the first redial fails, the next one connects.
    setUp(false)
    setReachable(false)
    r.disconnected('P')
    await vt.advance(100)
    setReachable(true)
    await vt.advance(200)
    expect(dials.slice(5)).toEqual([1_600, 1_700])
    expect(r.state('P')?.failures).toBe(0)
  })

  it('a connection the peer opened stops the redials; unwatch and close cancel them', async () => {
    const { r, vt, dials } = setup()
    r.watch('P', 'addr')
    await vt.advance(150)
    r.connected('P')
    await vt.advance(5_000)
    expect(dials).toEqual([0, 100])
    r.watch('Q', 'addr')
    r.unwatch('Q')
    r.watch('R', 'addr')
    r.close()
    await vt.advance(5_000)
    expect(vt.live()).toBe(0)
    expect(r.state('R')).toBeUndefined()
  })
})
