import { describe, expect, it } from 'vitest'
import { SYNC_LIMITS } from '../../sync/protocol/limits.ts'
import { SyncDriver } from '../../sync/protocol/sync-driver.ts'
import { SyncScheduler, type RoundEvent, type SchedulerOptions } from '../../sync/protocol/sync-scheduler.ts'
import { SimNetwork } from '../../sim/network.ts'
import { Prng } from '../../sim/prng.ts'
import { Scheduler } from '../../sim/scheduler.ts'
import { idFor } from '../helpers.ts'
import { headsOf, node, type Node } from './helpers.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

/**
 * Two peers on a simulated network of fixed delay with drivers, and a scheduler on A. B holds
 * A's space (`bHolds`) or only one of its own.
 */
async function pair(delay: number | [number, number], opts: SchedulerOptions, bHolds = false, prepare?: (a: Node) => Promise<unknown>) {
  const a = await node('a', 1)
  await a.replica.addMember(idFor(2), 'writer')
  await prepare?.(a)
  const b = await node('b', 2, bHolds ? a.replica.spaceId : undefined)
  const sched = new Scheduler()
  const net = new SimNetwork(
    sched,
    new Prng(5),
    { loss: 0, dup: 0, delayMin: typeof delay === 'number' ? delay : delay[0], delayMax: typeof delay === 'number' ? delay : delay[1], ordered: true },
    SYNC_LIMITS.maxMessageBytes,
  )
  const da = new SyncDriver({ transport: net.attach('a'), session: a.session, timer: sched.timer('a'), timeoutMs: 2000 })
  new SyncDriver({ transport: net.attach('b'), session: b.session, timer: sched.timer('b'), timeoutMs: 2000 })
  const scheduler = new SyncScheduler(
    da,
    () => [a.replica.spaceId],
    sched.timer('sched'),
    () => sched.now,
    opts,
  )
  return { a, b, sched, scheduler, da }
}

describe('the sync scheduler', () => {
  it('does not back off a peer that answers it does not hold the space, so the next relay still goes to it', async () => {
    // A holds a space B's account may read; B holds only a space of its own (it has not taken
    // A's yet), so B answers A's rounds about it with `unknown_space`. A hub sees this from every
    // reader that has not fetched a space yet: it must go on relaying to them, not wait out a
    // backoff that grows with each such answer (up to a minute).
    const { a, sched, scheduler } = await pair([1, 5], { relayMs: 50, periodMs: 1e9, backoffBaseMs: 10_000 })
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

  it('a lone local write goes out after firstMs; a burst right after shares one round at the end of the window', async () => {
    // Typing in a shared paragraph: a keystroke after a pause must not wait out a batching
    // window, while a burst of writes still costs one round per window (this test fails with
    // the scheduler that waited debounceMs before every first round).
    const { a, sched, scheduler } = await pair(20, { firstMs: 10, debounceMs: 150, periodMs: 1e9 })
    const starts: number[] = []
    scheduler.onRound((e) => {
      if (e.phase === 'start') starts.push(sched.now)
    })
    scheduler.peerUp('b')
    await sched.run(sched.now + 1000)
    starts.length = 0
    const t0 = sched.now
    scheduler.changed(a.replica.spaceId)
    await sched.run(t0 + 15)
    expect(starts.map((t) => t - t0)).toEqual([10])
    // Three writes inside the window that round opened: one more round, when the window ends.
    for (const at of [20, 30, 40]) {
      await sched.run(t0 + at)
      scheduler.changed(a.replica.spaceId)
    }
    await sched.run(t0 + 1000)
    expect(starts.map((t) => t - t0)).toEqual([10, 160])
    scheduler.stop()
  })

  it('edits made one after another, each once the last round ended, go one round each without waiting out the window', async () => {
    // The live edit: a user changes a field, sees it on the other device, changes it again.
    // Each change is alone, so it must not wait for the batching window the first one opened
    // (with the window always held, every edit after the first waited up to debounceMs).
    const { a, sched, scheduler } = await pair(1, { firstMs: 5, debounceMs: 150, periodMs: 1e9 })
    const starts: number[] = []
    const ends: number[] = []
    scheduler.onRound((e) => (e.phase === 'start' ? starts : ends).push(sched.now))
    scheduler.peerUp('b')
    await sched.run(sched.now + 1000)
    starts.length = 0
    ends.length = 0
    const writes: number[] = []
    for (let i = 0; i < 4; i++) {
      await sched.run(sched.now + 2)
      writes.push(sched.now)
      scheduler.changed(a.replica.spaceId)
      for (let k = 0; k < 100 && ends.length <= i; k++) await sched.run(sched.now + 1)
      expect(ends).toHaveLength(i + 1)
    }
    // Each round opened firstMs after its write, and the four took far less than one window.
    expect(starts.map((t, i) => t - writes[i])).toEqual([5, 5, 5, 5])
    expect(sched.now - writes[0]).toBeLessThan(150)
    scheduler.stop()
  })

  for (const push of [true, false])
    it(`a lone local write ${push ? 'reaches a connected reader in one message, before its round' : 'waits for its round with the push off'}`, async () => {
      // The live edit across devices: with the push, the peer holds the change one network delay
      // after the write and the round after it finds both sides in sync at once. This test fails
      // with a scheduler that only ever runs rounds (the `false` case shows the old timing).
      let obj = ''
      const { a, b, sched, scheduler } = await pair(3, { firstMs: 5, debounceMs: 50, periodMs: 1e9, lonePushMaxChanges: push ? 16 : 0 }, true, async (a) => {
        obj = await a.replica.createObject()
        await modifyRecords(a.replica, obj, 'd', [{ id: 'x', ops: [{ type: '$set', path: 'v', value: 0 }] }])
      })
      a.replica.addCommitListener((info) => scheduler.changed(a.replica.spaceId, info.local, info))
      scheduler.peerUp('b')
      await sched.run(sched.now + 1000)
      expect(headsOf(b.replica)).toBe(headsOf(a.replica))
      const outcomes: string[] = []
      scheduler.onRound((e) => {
        if (e.phase === 'end') outcomes.push(e.result!.outcome)
      })
      const t0 = sched.now
      /** Writes `v` at t0 + `at`; resolves when B holds it, with the time since the write. */
      const write = async (v: number, at: number) => {
        await sched.run(t0 + at)
        await modifyRecords(a.replica, obj, 'd', [{ id: 'x', ops: [{ type: '$set', path: 'v', value: v }] }])
        // What the commit set going (reading the change back, sealing the step) finishes before
        // virtual time moves: on a real clock it takes well under the network's delay.
        await new Promise((r) => setTimeout(r, 50))
        for (let t = at + 1; t <= at + 200; t++) {
          await sched.run(t0 + t)
          if (headsOf(b.replica) === headsOf(a.replica)) return sched.now - t0 - at
        }
        return -1
      }
      // The first after a quiet spell; the second while the first's round (5 ms to about 11 ms)
      // is still running, as an edit made the moment the last one showed on the other side.
      const seen = [await write(1, 0), await write(2, 7)]
      await sched.run(t0 + 500)
      if (push) {
        // One delay of 3 ms each; the rounds after them had nothing to carry.
        expect(seen).toEqual([3, 3])
        expect(outcomes).toEqual(['in_sync', 'in_sync'])
      } else {
        expect(seen[0]).toBeGreaterThan(5 + 3)
        expect(seen[1]).toBeGreaterThan(3)
        expect(outcomes).toEqual(['synced', 'synced'])
      }
      // Nothing of it counts against either side (B's one denial is from before it held the ACL).
      expect(b.session.countersOf('a')).toMatchObject({ dropped: {}, rejected: {}, denied: 1 })
      expect(a.session.strikes('b')).toBe(0)
      scheduler.stop()
    })

  it('a burst of writes pushes at most the bucket, and its round carries the rest', async () => {
    // A bulk writer must not cost its peers one step per write: past lonePushBurst pushes, and
    // one per lonePushRefillMs after, writes wait for their round (one batch).
    const { a, sched, scheduler, da } = await pair(1, { firstMs: 5, debounceMs: 50, periodMs: 1e9, lonePushBurst: 4, lonePushRefillMs: 10 })
    const pushed: string[] = []
    da.pushLone = (_peer, _space, ids) => {
      pushed.push(...ids)
      return Promise.resolve(true)
    }
    scheduler.peerUp('b')
    await sched.run(sched.now + 1000)
    const starts: number[] = []
    scheduler.onRound((e) => {
      if (e.phase === 'start') starts.push(sched.now)
    })
    const t0 = sched.now
    // 20 writes at once, each its own commit: the bucket's 4 are pushed; the 5th waits unsent,
    // and every later one waits for the round too.
    for (let i = 0; i < 20; i++) scheduler.changed(a.replica.spaceId, true, { changeIds: [`w${i}`], treeIds: ['t'] })
    expect(pushed).toEqual(['w0', 'w1', 'w2', 'w3'])
    await sched.run(t0 + 100)
    expect(starts.length).toBeGreaterThan(0)
    // After the round, writes one at a time go out as pushes again, until the bucket is empty.
    pushed.length = 0
    for (let i = 0; i < 6; i++) {
      await sched.run(sched.now + 1)
      scheduler.changed(a.replica.spaceId, true, { changeIds: [`x${i}`], treeIds: ['t'] })
      await sched.run(sched.now + 20)
    }
    expect(pushed.length).toBeGreaterThanOrEqual(3)
    expect(pushed.length).toBeLessThanOrEqual(6)
    scheduler.stop()
  })
})
