import { describe, expect, it } from 'vitest'
import { JoinDriver } from '../../sync/protocol/join-driver.ts'
import { JOIN_LIMITS } from '../../sync/protocol/limits.ts'
import type { Timer } from '../../sync/protocol/sync-driver.ts'

/** Virtual time: timers fire only when the test advances the clock. */
function virtualTimer() {
  let now = 0
  let timers: Array<{ at: number; fn: () => void; live: boolean }> = []
  const timer: Timer = {
    after(ms, fn) {
      const t = { at: now + ms, fn, live: true }
      timers.push(t)
      return () => void (t.live = false)
    },
    yield: async () => undefined,
  }
  const advance = (ms: number) => {
    const end = now + ms
    for (;;) {
      const due = timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0]
      if (!due) break
      now = due.at
      due.live = false
      due.fn()
    }
    now = end
    timers = timers.filter((t) => t.live)
  }
  return { timer, advance, pending: () => timers.filter((t) => t.live).length, now: () => now }
}

function setup(peers: string[] = ['p1', 'p2']) {
  const vt = virtualTimer()
  const sent: Array<{ at: number; peer: string; spaceId: string; change: number }> = []
  const d = new JoinDriver({
    send: async (peer, spaceId, change) => void sent.push({ at: vt.now(), peer, spaceId, change: change[0] }),
    peers: () => peers,
    timer: vt.timer,
    retryBaseMs: 1_000,
    retryMaxMs: 8_000,
  })
  return { d, vt, sent, peers }
}

describe('JoinDriver', () => {
  it('sends to every authenticated peer at once, then with exponential backoff, capped', () => {
    const { d, vt, sent } = setup()
    d.ask('S', new Uint8Array([1]))
    vt.advance(40_000)
    const times = [...new Set(sent.map((s) => s.at))]
    expect(times).toEqual([0, 1_000, 3_000, 7_000, 15_000, 23_000, 31_000, 39_000])
    expect(sent.filter((s) => s.at === 0).map((s) => s.peer)).toEqual(['p1', 'p2'])
  })

  it('a peer that authenticates between rounds gets the join at once, once', () => {
    const { d, vt, sent, peers } = setup(['p1'])
    d.ask('S', new Uint8Array([1]))
    peers.push('p3')
    d.peerUp('p3')
    d.peerUp('p3')
    d.peerUp('p1')
    expect(sent.map((s) => s.peer)).toEqual(['p1', 'p3'])
    vt.advance(1_000)
    expect(sent.map((s) => s.peer)).toEqual(['p1', 'p3', 'p1', 'p3'])
  })

  it('asking again replaces the change and restarts the backoff; stop ends it and its timer', () => {
    const { d, vt, sent } = setup(['p1'])
    d.ask('S', new Uint8Array([1]))
    vt.advance(3_500)
    d.ask('S', new Uint8Array([2]))
    vt.advance(1_000)
    expect(sent.map((s) => s.change)).toEqual([1, 1, 1, 2, 2])
    d.stop('S')
    expect(vt.pending()).toBe(0)
    vt.advance(60_000)
    expect(sent).toHaveLength(5)
    expect(d.spaces()).toEqual([])
  })

  it('reports each status answer for a space it still asks for; answers without a status or for other spaces are not reported', () => {
    const { d } = setup()
    const got: string[] = []
    d.events.on('status', (e) => got.push(`${e.spaceId}:${e.status}:${e.identity}`))
    d.ask('S', new Uint8Array([1]))
    d.answered({ peer: 'p1', identity: 'A', spaceId: 'S' })
    d.answered({ peer: 'p1', identity: 'A', spaceId: 'T', status: 'accepted' })
    d.answered({ peer: 'p2', identity: 'B', spaceId: 'S', status: 'pending' })
    d.stop('S')
    d.answered({ peer: 'p2', identity: 'B', spaceId: 'S', status: 'accepted' })
    expect(got).toEqual(['S:pending:B'])
  })

  it('at most maxActiveJoins spaces are repeated; the least recently asked stops', () => {
    const { d, vt } = setup(['p1'])
    for (let i = 0; i < JOIN_LIMITS.maxActiveJoins + 5; i++) d.ask(`S${i}`, new Uint8Array([1]))
    expect(d.spaces()).toHaveLength(JOIN_LIMITS.maxActiveJoins)
    expect(d.spaces()[0]).toBe('S5')
    expect(vt.pending()).toBe(JOIN_LIMITS.maxActiveJoins)
    d.close()
    expect(vt.pending()).toBe(0)
  })
})
