import { describe, expect, it } from 'vitest'
import { derivedRoot } from '../../sync/dag/change.ts'
import { encodeMessage, decodeMessage, type Message } from '../../sync/protocol/messages.ts'
import { SyncDriver } from '../../sync/protocol/sync-driver.ts'
import { SYNC_LIMITS } from '../../sync/protocol/limits.ts'
import { SyncScheduler } from '../../sync/protocol/sync-scheduler.ts'
import { SimNetwork } from '../../sim/network.ts'
import { Prng } from '../../sim/prng.ts'
import { Scheduler } from '../../sim/scheduler.ts'
import { idFor } from '../helpers.ts'
import { exchange, headsOf, link, node, type Node } from '../protocol/helpers.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

/**
 * Rights before work (issue 11): a peer learns a space id or count, gets an answer, or gets its
 * changes looked at, only if its account may read the space at our ACL state. Real sessions
 * and replicas; the stranger is an authenticated account that is no member.
 */

const set = (r: Node['replica'], obj: string, rec: string, v: unknown) => modifyRecords(r, obj, 'd', [{ id: rec, ops: [{ type: '$set', path: 'v', value: v }] }])

async function ownerWithMember() {
  const a = await node('a', 1)
  await a.replica.addMember(idFor(2), 'writer')
  const obj = await a.replica.createObject()
  await set(a.replica, obj, 'x', 1)
  return { a, obj }
}

const step = (spaceId: string, req: number, changes: Uint8Array[], extra: Partial<Extract<Message, { type: 'step' }>> = {}): Uint8Array =>
  encodeMessage({ type: 'step', spaceId, req, hop: 1, ranges: [], heads: [], wants: [], changes, ...extra })

describe('A stranger writes junk into any space', () => {
  it('object changes from an account that may not read the space are dropped before decoding, and counted', async () => {
    const { a } = await ownerWithMember()
    const stranger = await node('s', 9, a.replica.spaceId)
    await link(a, stranger)
    const before = headsOf(a.replica)
    // Unsigned derived roots with seeds nobody expects: the cheapest junk there is.
    const junk = Array.from({ length: 200 }, (_, i) => derivedRoot(a.replica.spaceId, new TextEncoder().encode(`junk ${i}`)).raw)
    const ingested: number[] = []
    const ingest = a.replica.ingest.bind(a.replica)
    a.replica.ingest = (items: Parameters<typeof ingest>[0], ...rest: unknown[]) => {
      ingested.push(items.length)
      return (ingest as (...x: unknown[]) => ReturnType<typeof ingest>)(items, ...rest)
    }
    // As a push (an answer step), and inside a question.
    const replies = [
      ...(await a.session.handle('s', step(a.replica.spaceId, 7, junk.slice(0, 100)))),
      ...(await a.session.handle('s', step(a.replica.spaceId, 8, junk.slice(100), { wants: [1] }))),
    ]
    expect(headsOf(a.replica)).toBe(before)
    expect(a.replica.treeIds()).toHaveLength(1)
    // Nothing of it reached the replica, not even for checking.
    expect(ingested).toEqual([])
    expect(a.session.countersOf('s').rejected.not_reader).toBe(200)
    // The question got the answer for a space we do not hold; the push got nothing.
    expect(replies.map((r) => decodeMessage(r.bytes))).toEqual([{ type: 'error', spaceId: a.replica.spaceId, req: 8, code: 'unknown_space' }])
  })

  it('the one exception: the ACL records a member we have not learned of leads with, bounded per step', async () => {
    const { a } = await ownerWithMember()
    const b = await node('b', 2, a.replica.spaceId)
    await link(a, b)
    await exchange(b, a)
    // The owner adds account 3; only c learns of it. c proves membership to b with the record.
    await a.replica.addMember(idFor(3), 'writer')
    const c = await node('c', 3, a.replica.spaceId)
    await link(a, c)
    await exchange(c, a)
    await link(b, c)
    await exchange(c, b)
    expect(b.replica.acl.current().canRead(idFor(3))).toBe(true)
    expect(headsOf(b.replica)).toBe(headsOf(c.replica))
    expect(SYNC_LIMITS.maxAclChangesFromNonReader).toBeLessThanOrEqual(4096)
  })
})

describe('Any authenticated peer learns every space id and object count', () => {
  it('a refusal is the answer for a space we do not hold, byte for byte', async () => {
    const { a } = await ownerWithMember()
    const stranger = await node('s', 9, a.replica.spaceId)
    await link(a, stranger)
    const other = (await node('o', 5)).replica.spaceId // a space a does not hold
    const ask = (spaceId: string, count: number) => encodeMessage({ type: 'sync', spaceId, req: 42, fp: new Uint8Array(8), count })
    const held = await a.session.handle('s', ask(a.replica.spaceId, 0))
    const unheld = await a.session.handle('s', ask(other, 0))
    const norm = (out: Array<{ bytes: Uint8Array }>, spaceId: string) => out.map((o) => ({ ...decodeMessage(o.bytes), spaceId: spaceId === a.replica.spaceId ? 'S' : 'S' }))
    expect(norm(held, a.replica.spaceId)).toEqual(norm(unheld, other))
    expect(held.map((o) => o.bytes.length)).toEqual(unheld.map((o) => o.bytes.length))
    // Questions inside an exchange too.
    const q = await a.session.handle('s', step(a.replica.spaceId, 43, [], { ranges: [{ kind: 'elems', prefix: 0, len: 0, elems: new Uint8Array(0) }] }))
    expect(q.map((o) => decodeMessage(o.bytes))).toEqual([{ type: 'error', spaceId: a.replica.spaceId, req: 43, code: 'unknown_space' }])
    expect(a.session.countersOf('s').denied).toBe(2)
  })

  it('the scheduler never opens a round with a peer whose account may not read the space', async () => {
    const { a } = await ownerWithMember()
    const stranger = await node('s', 9, a.replica.spaceId)
    const sched = new Scheduler()
    const net = new SimNetwork(sched, new Prng(3), { loss: 0, dup: 0, delayMin: 1, delayMax: 5, ordered: true }, SYNC_LIMITS.maxMessageBytes)
    const ta = net.attach('a')
    const ts = net.attach('s')
    const heard: Message[] = []
    const da = new SyncDriver({ transport: ta, session: a.session, timer: sched.timer('a'), timeoutMs: 1000 })
    // The stranger's side: a session that answers challenges; it records everything it hears.
    const reply = (out: Array<{ to: string; bytes: Uint8Array }>) => out.forEach((o) => ts.send(o.to, o.bytes))
    ts.onPeerUp((p) => reply(stranger.session.peerUp(p)))
    ts.onMessage(async (from, bytes) => {
      heard.push(decodeMessage(bytes))
      reply(await stranger.session.handle(from, bytes))
    })
    const scheduler = new SyncScheduler(
      da,
      () => [a.replica.spaceId],
      sched.timer('sched'),
      () => sched.now,
      { periodMs: 500 },
    )
    ta.onPeerUp((p) => scheduler.peerUp(p))
    for (let i = 0; i < 40; i++) await sched.run(sched.now + 100)
    scheduler.stop()
    expect(a.session.identityOf('s')).toBe(idFor(9))
    const about = heard.filter((m) => m.type !== 'hello' && m.type !== 'auth')
    expect(about).toEqual([])
    expect(scheduler.stats.get(a.replica.spaceId)?.size ?? 0).toBe(0)
  })
})
