import { describe, expect, it } from 'vitest'
import { BoundedMap } from '../../sync/protocol/bounded-map.ts'
import { PeerGuard } from '../../sync/p2p/peer-guard.ts'

describe('BoundedMap', () => {
  it('holds at most max entries and evicts the least recently set or read', () => {
    const m = new BoundedMap<string, number>(3)
    m.set('a', 1).set('b', 2).set('c', 3)
    m.get('a')
    m.set('d', 4)
    expect([...m.keys()]).toEqual(['c', 'a', 'd'])
    m.set('c', 5)
    m.set('e', 6)
    expect([...m.entries()]).toEqual([
      ['d', 4],
      ['c', 5],
      ['e', 6],
    ])
    expect(m.size).toBe(3)
  })
})

describe('PeerGuard', () => {
  const clock = () => {
    let t = 1_000_000
    return { now: () => t, advance: (ms: number) => (t += ms) }
  }

  it('backs a peer off at maxFaults, refuses it until the back-off ends, and doubles each further back-off', () => {
    const c = clock()
    const g = new PeerGuard({ now: c.now, maxFaults: 4, faultLeakPerSec: 0, backoffBaseMs: 1_000, backoffMaxMs: 3_000 })
    expect([1, 2, 3].map(() => g.fault('p'))).toEqual([false, false, false])
    expect(g.refused('p')).toBe(false)
    expect(g.fault('p')).toBe(true)
    expect(g.refused('p')).toBe(true)
    expect(g.refused('q')).toBe(false)
    c.advance(999)
    expect(g.refused('p')).toBe(true)
    c.advance(1)
    expect(g.refused('p')).toBe(false)
    // Second back-off: 2 s; third: capped at 3 s.
    expect(g.fault('p', 4)).toBe(true)
    c.advance(1_999)
    expect(g.refused('p')).toBe(true)
    c.advance(1)
    expect(g.refused('p')).toBe(false)
    g.fault('p', 4)
    expect(g.backedOffUntil('p')).toBe(c.now() + 3_000)
    expect(g.backoffs).toBe(3)
  })

  it('the score drains over time: rare faults of an honest peer never add up', () => {
    const c = clock()
    const g = new PeerGuard({ now: c.now, maxFaults: 4, faultLeakPerSec: 1 })
    for (let i = 0; i < 100; i++) {
      expect(g.fault('honest')).toBe(false)
      c.advance(1_000)
    }
    expect(g.fault('burst', 2)).toBe(false)
    expect(g.fault('burst', 2)).toBe(true)
  })

  it('remembers at most maxTracked peers', () => {
    const g = new PeerGuard({ now: () => 0, maxTracked: 16 })
    for (let i = 0; i < 10_000; i++) g.fault(`peer${i}`)
    expect(g.tracked).toBe(16)
  })
})
