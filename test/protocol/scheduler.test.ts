import { describe, expect, it } from 'vitest'
import { SYNC_LIMITS } from '../../sync/protocol/limits.ts'
import { SyncDriver } from '../../sync/protocol/sync-driver.ts'
import { SyncScheduler, type RoundEvent } from '../../sync/protocol/sync-scheduler.ts'
import { SimNetwork } from '../../sim/network.ts'
import { Prng } from '../../sim/prng.ts'
import { Scheduler } from '../../sim/scheduler.ts'
import { idFor } from '../helpers.ts'
import { node } from './helpers.ts'

describe('the sync scheduler', () => {
  it('does not back off a peer that answers it does not hold the space, so the next relay still goes to it', async () => {
    // A holds a space B's account may read; B holds only a space of its own (it has not taken
    // A's yet), so B answers A's rounds about it with `unknown_space`. A hub sees this from every
    // reader that has not fetched a space yet: it must go on relaying to them, not wait out a
    // backoff that grows with each such answer (up to a minute).
    const a = await node('a', 1)
    await a.replica.addMember(idFor(2), 'writer')
    const b = await node('b', 2)
    const sched = new Scheduler()
    const net = new SimNetwork(sched, new Prng(5), { loss: 0, dup: 0, delayMin: 1, delayMax: 5, ordered: true }, SYNC_LIMITS.maxMessageBytes)
    const ta = net.attach('a')
    const da = new SyncDriver({ transport: ta, session: a.session, timer: sched.timer('a'), timeoutMs: 2000 })
    new SyncDriver({ transport: net.attach('b'), session: b.session, timer: sched.timer('b'), timeoutMs: 2000 })
    const scheduler = new SyncScheduler(
      da,
      () => [a.replica.spaceId],
      sched.timer('sched'),
      () => sched.now,
      { relayMs: 50, periodMs: 1e9, backoffBaseMs: 10_000 },
    )
    const ends: RoundEvent[] = []
    scheduler.onRound((e) => {
      if (e.phase === 'end') ends.push(e)
    })
    scheduler.peerUp('b')
    for (let i = 0; i < 20 && ends.length < 1; i++) await sched.run(sched.now + 100)
    expect(ends.map((e) => [e.result?.outcome, e.result?.error])).toEqual([['error', 'unknown_space']])
    scheduler.changed(a.replica.spaceId, false)
    for (let i = 0; i < 20 && ends.length < 2; i++) await sched.run(sched.now + 100)
    // Well within the backoff a failure would have set: the relay round ran.
    expect(sched.now).toBeLessThan(10_000)
    expect(ends).toHaveLength(2)
    expect(scheduler.stats.get(a.replica.spaceId)?.get('b')?.lastErr).toBeNull()
    scheduler.stop()
  })
})
