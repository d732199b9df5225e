import { describe, expect, it } from 'vitest'
import { SYNC_LIMITS } from '../../sync/protocol/limits.ts'
import { SyncDriver } from '../../sync/protocol/sync-driver.ts'
import { SimNetwork } from '../../sim/network.ts'
import { Prng } from '../../sim/prng.ts'
import { Scheduler } from '../../sim/scheduler.ts'
import { idFor } from '../helpers.ts'
import { headsOf, node, type Node } from './helpers.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

/** Two peers with drivers on a simulated network (delay only). */
async function setup(loss = 0) {
  const a = await node('a', 1)
  await a.replica.addMember(idFor(2), 'writer')
  const obj = await a.replica.createObject()
  await modifyRecords(a.replica, obj, 'd', [{ id: 'x', ops: [{ type: '$set', path: 'v', value: 1 }] }])
  const b = await node('b', 2, a.replica.spaceId)
  const sched = new Scheduler()
  const net = new SimNetwork(sched, new Prng(7), { loss, dup: 0, delayMin: 5, delayMax: 40, ordered: true }, SYNC_LIMITS.maxMessageBytes)
  const driver = (n: Node) => new SyncDriver({ transport: net.attach(n.name), session: n.session, timer: sched.timer(`timeout ${n.name}`), timeoutMs: 2000 })
  const da = driver(a)
  const db = driver(b)
  return { a, b, obj, sched, net, da, db }
}

/** Runs a driver call to completion on the virtual clock. */
async function run<T>(sched: Scheduler, p: Promise<T>): Promise<T> {
  let out: T | undefined
  let done = false
  void p.then((v) => {
    out = v
    done = true
  })
  while (!done) {
    await sched.run(sched.now + 50)
    if (sched.idle() && !done) await sched.run(sched.now + 10_000)
  }
  return out!
}

describe('sync driver over the simulated transport', () => {
  it('authenticates the link, syncs a fresh member, then finds the space in sync in one round trip', async () => {
    const { a, b, sched, db, da } = await setup()
    const first = await run(sched, db.syncSpace('a', a.replica.spaceId))
    expect(first).toMatchObject({ ok: true, outcome: 'synced', roundTrips: 1 })
    expect(first.changesIn).toBeGreaterThan(0)
    expect(headsOf(b.replica)).toBe(headsOf(a.replica))
    const again = await run(sched, da.syncSpace('b', a.replica.spaceId))
    expect(again).toMatchObject({ ok: true, outcome: 'in_sync', roundTrips: 1, messagesOut: 1, messagesIn: 1 })
    expect(again.bytesOut).toBeLessThanOrEqual(64)
    expect(again.bytesIn).toBeLessThanOrEqual(64)
  })

  it('a round whose messages are all lost ends at its timeout', async () => {
    const { a, sched, net, db } = await setup()
    await run(sched, db.syncSpace('a', a.replica.spaceId))
    net.cut('a', 'b')
    const lost = await run(sched, db.syncSpace('a', a.replica.spaceId))
    expect(lost).toMatchObject({ ok: false, outcome: 'timeout' })
    net.restore('a', 'b')
    expect(await run(sched, db.syncSpace('a', a.replica.spaceId))).toMatchObject({ ok: true, outcome: 'in_sync' })
  })

  it('a peer that goes down ends its rounds', async () => {
    const { a, b, sched, da, db } = await setup()
    await run(sched, db.syncSpace('a', a.replica.spaceId))
    await modifyRecords(b.replica, b.replica.treeIds()[0], 'd', [{ id: 'y', ops: [{ type: '$set', path: 'v', value: 2 }] }])
    const round = da.begin('b', a.replica.spaceId)
    await db.close()
    const r = await run(
      sched,
      round.then((x) => x.done),
    )
    expect(r.ok).toBe(false)
  })
})
