import { describe, expect, it } from 'vitest'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { seal } from '../../sync/crypto/box.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { signChange } from '../../sync/dag/change.ts'
import { authBytes } from '../../sync/protocol/auth.ts'
import { PROTOCOL_VERSION, SYNC_LIMITS } from '../../sync/protocol/limits.ts'
import { decodeMessage, encodeMessage, type Message } from '../../sync/protocol/messages.ts'
import { idFor, keyFor, seededEnv } from '../helpers.ts'
import { exchange, frames, headsOf, link, node, pump, type Node } from './helpers.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

const set = (r: Node['replica'], obj: string, rec: string, v: unknown) => modifyRecords(r, obj, 'd', [{ id: rec, ops: [{ type: '$set', path: 'v', value: v }] }])

/** An owner with an object and a writer member, both holding everything. */
async function twoMembers() {
  const a = await node('a', 1)
  await a.replica.addMember(idFor(2), 'writer')
  const obj = await a.replica.createObject()
  await set(a.replica, obj, 'x', 1)
  const b = await node('b', 2, a.replica.spaceId)
  await link(a, b)
  await exchange(a, b)
  expect(headsOf(b.replica)).toBe(headsOf(a.replica))
  return { a, b, obj }
}

const types = (fs: Array<{ bytes: Uint8Array }>) => fs.map((f) => decodeMessage(f.bytes).type)

describe('head-sync session', () => {
  it('a fresh member receives the whole space, ACL first, in one exchange', async () => {
    const a = await node('a', 1)
    await a.replica.addMember(idFor(2), 'writer')
    const obj = await a.replica.createObject()
    await set(a.replica, obj, 'x', 1)
    const b = await node('b', 2, a.replica.spaceId)
    await link(a, b)
    expect(b.session.identityOf('a')).toBe(idFor(1))
    const { end, seen } = await exchange(b, a)
    expect(end?.outcome).toBe('synced')
    expect(end?.roundTrips).toBe(1)
    expect(types(seen)).toEqual(['sync', 'step'])
    const step = decodeMessage(seen[1].bytes) as Extract<Message, { type: 'step' }>
    // The ACL records come first: every change after them cites one.
    expect(step.changes.length).toBe(a.session.countersOf('b').changesOut)
    expect(b.replica.known).toBe(true)
    expect(headsOf(b.replica)).toBe(headsOf(a.replica))
    expect(await b.replica.stateDigest()).toBe(await a.replica.stateDigest())
    expect(b.session.countersOf('a').rejected).toEqual({})
  })

  it('a space in sync costs one round trip of at most 64 bytes each way', async () => {
    const { a, b } = await twoMembers()
    const { end, seen } = await exchange(a, b)
    expect(end).toMatchObject({ outcome: 'in_sync', roundTrips: 1, messagesOut: 1, messagesIn: 1 })
    expect(types(seen)).toEqual(['sync', 'done'])
    expect(end!.bytesOut).toBeLessThanOrEqual(64)
    expect(end!.bytesIn).toBeLessThanOrEqual(64)
  })

  it('concurrent writes on both sides converge in one exchange, both ways', async () => {
    const { a, b, obj } = await twoMembers()
    await set(a.replica, obj, 'x', 'from a')
    await set(b.replica, obj, 'x', 'from b')
    await set(b.replica, obj, 'y', 2)
    const other = await b.replica.createObject()
    await set(b.replica, other, 'z', 3)
    const bigger = await a.replica.createObject()
    for (let i = 0; i < 5; i++) await set(a.replica, bigger, `r${i}`, i)
    const inA = a.session.countersOf('b').changesIn
    const inB = b.session.countersOf('a').changesIn
    const { end } = await exchange(a, b)
    expect(end?.outcome).toBe('synced')
    expect(end!.roundTrips).toBe(2)
    expect(headsOf(b.replica)).toBe(headsOf(a.replica))
    expect(await b.replica.stateDigest()).toBe(await a.replica.stateDigest())
    // Each side received only what it lacked.
    expect(a.session.countersOf('b').changesIn - inA).toBe(4)
    expect(b.session.countersOf('a').changesIn - inB).toBe(7)
  })

  it('in a space of many trees, ranges narrow and only the differing trees travel', async () => {
    const a = await node('a', 1)
    await a.replica.addMember(idFor(2), 'writer')
    const objs: string[] = []
    for (let i = 0; i < 150; i++) objs.push(await a.replica.createObject())
    const b = await node('b', 2, a.replica.spaceId)
    await link(a, b)
    await exchange(b, a)
    expect(headsOf(b.replica)).toBe(headsOf(a.replica))
    await set(a.replica, objs[17], 'x', 1)
    await set(b.replica, objs[99], 'y', 2)
    const inA = a.session.countersOf('b').changesIn
    const inB = b.session.countersOf('a').changesIn
    const { end, seen } = await exchange(a, b)
    expect(end?.outcome).toBe('synced')
    // The first reply splits the whole space into child ranges instead of listing 151 elements.
    const first = decodeMessage(seen[1].bytes) as Extract<Message, { type: 'step' }>
    expect(first.ranges.map((r) => r.kind)).toEqual(['fps'])
    expect(headsOf(b.replica)).toBe(headsOf(a.replica))
    expect(a.session.countersOf('b').changesIn - inA).toBe(1)
    expect(b.session.countersOf('a').changesIn - inB).toBe(1)
    expect(end!.bytesOut + end!.bytesIn).toBeLessThan(3000)
  })

  it('a host may take a space it does not hold when a member syncs it', async () => {
    const a = await node('a', 1)
    await a.replica.addMember(idFor(2), 'writer')
    await a.replica.createObject()
    const holder = await node('b', 2, a.replica.spaceId)
    let taken: Node['replica'] | undefined
    const b = { ...holder }
    b.session = new (holder.session.constructor as typeof import('../../sync/protocol/session.ts').SyncSession)({
      host: { space: () => taken, accept: async (id, who) => (who === idFor(1) && id === a.replica.spaceId ? (taken = holder.replica) : undefined) },
      key: keyFor(2),
      peerId: 'b',
      crypto: await defaultCryptoProvider(),
      env: seededEnv(77),
    })
    await link(a, b)
    await exchange(a, b)
    expect(taken).toBe(holder.replica)
    expect(headsOf(holder.replica)).toBe(headsOf(a.replica))
  })

  it('a non-member gets nothing: the answer for a space we do not hold, no changes, no heads, and it is counted', async () => {
    const { a } = await twoMembers()
    const c = await node('c', 3, a.replica.spaceId)
    await link(a, c)
    const asked = await exchange(c, a)
    expect(asked.end).toMatchObject({ outcome: 'error', error: 'unknown_space' })
    expect(types(asked.seen)).toEqual(['sync', 'error'])
    expect(a.session.countersOf('c').denied).toBe(1)
    // Nor does a member open an exchange with it: that would tell it the space id and size.
    const offered = await exchange(a, c)
    expect(offered.opened).toMatchObject({ error: 'denied' })
    expect(offered.seen).toEqual([])
    expect(c.replica.known).toBe(false)
    expect(c.replica.treeIds()).toEqual([])
    expect(c.session.countersOf('a').changesIn).toBe(0)
  })

  it('a removed member is refused, and what it pushes beyond the ACL is dropped before decoding, counted (its unseen write never applies)', async () => {
    const { a, b, obj } = await twoMembers()
    // b writes while cut off; then the owner removes it, not having seen that write.
    const before = await set(b.replica, obj, 'mine', 'written before removal')
    await a.replica.removeMember(idFor(2))
    // b's first exchange draws the removal notice (docs/protocol.md, "Removal notice"): it is
    // lost on the way here, so b still holds itself a member; the link's one notice is spent.
    const lost = await exchange(b, a, { tap: (f) => (f.from === 'a' ? undefined : f) })
    if ('req' in lost.opened) b.session.abandon('a', lost.opened.req)
    const { end } = await exchange(b, a)
    expect(end).toMatchObject({ outcome: 'error', error: 'unknown_space' })
    // The refusal made b push the ACL chain and its own changes; a took the ACL records (it
    // holds them all) and dropped the rest unread: rights before work.
    expect((await a.replica.treeIndex(obj)).has(before.changeId)).toBe(false)
    expect(a.session.countersOf('b').rejected.not_reader).toBeGreaterThan(0)
    // b learns nothing new: a wrote after the removal, b holds none of it.
    await set(a.replica, obj, 'secret', 'after removal')
    await exchange(b, a)
    await exchange(a, b)
    expect(await b.replica.getRecord(obj, 'd', 'secret')).toBeUndefined()
    expect(b.replica.acl.has((a.replica.acl.citation() as { head: string }).head)).toBe(false)
  })

  it('drops malformed, oversized, foreign and forged input with counted reasons, never throwing', async () => {
    const { a, b, obj } = await twoMembers()
    const junk = [new Uint8Array([1, 2, 3]), new Uint8Array(SYNC_LIMITS.maxMessageBytes + 1), encodeCanonical([PROTOCOL_VERSION + 1, 3]), encodeCanonical([PROTOCOL_VERSION, 42])]
    for (const j of junk) expect(await a.session.handle('b', j)).toEqual([])
    expect(a.session.countersOf('b').dropped).toMatchObject({ malformed: 1, oversized: 1, bad_version: 1, unknown_type: 1 })

    // A forged change (signed by another key than its author claims) among good ones.
    const crypto = await defaultCryptoProvider()
    const rk = b.replica.keyring.get(b.replica.acl.current().readKeyId!)!
    const mk = async (key: typeof keyFor extends (n: number) => infer K ? K : never, v: number) => {
      const idx = await b.replica.treeIndex(obj)
      const heads = b.replica.heads(obj)
      const lamport = Math.max(...heads.map((h) => idx.get(h)!.lamport)) + 1
      return signChange(crypto, key, {
        spaceId: b.replica.spaceId,
        treeId: obj,
        prevIds: heads,
        aclHeadId: (b.replica.acl.citation() as { head: string }).head,
        seq: 1,
        lamport,
        timestamp: 2_000_000_000_000,
        readKeyId: b.replica.acl.current().readKeyId!,
        payload: seal(seededEnv(v), rk, encodeCanonical({ ops: [{ op: 'set', ds: 'd', id: 'f', path: 'v', value: v }] })),
      })
    }
    const good = await mk(keyFor(2), 1)
    const forged = await mk(keyFor(2), 2)
    const raw = forged.raw.slice()
    raw[raw.length - 1] ^= 1
    const step: Message = { type: 'step', spaceId: a.replica.spaceId, req: 5, hop: 1, ranges: [], heads: [], wants: [], changes: [raw, good.raw] }
    await a.session.handle('b', encodeMessage(step))
    expect(a.session.countersOf('b').rejected).toEqual({ bad_signature: 1 })
    expect((await a.replica.treeIndex(obj)).has(good.id)).toBe(true)

    // Auth answers that are not for this link's challenge.
    await node('c', 3, a.replica.spaceId)
    const hello = a.session.peerUp('c')
    const nonce = (decodeMessage(hello[0].bytes) as Extract<Message, { type: 'hello' }>).nonce
    const crypto2 = await defaultCryptoProvider()
    const wrongKey = await crypto2.sign(keyFor(4).privateKey, authBytes(idFor(3), idFor(1), 'c', 'a', nonce))
    const wrongLink = await crypto2.sign(keyFor(3).privateKey, authBytes(idFor(3), idFor(1), 'c', 'elsewhere', nonce))
    const wrongNonce = await crypto2.sign(keyFor(3).privateKey, authBytes(idFor(3), idFor(1), 'c', 'a', new Uint8Array(16)))
    for (const signature of [wrongKey, wrongLink, wrongNonce]) {
      expect(await a.session.handle('c', encodeMessage({ type: 'auth', identity: idFor(3), signature }))).toEqual([])
    }
    expect(a.session.countersOf('c').dropped).toMatchObject({ bad_auth: 3 })
    expect(a.session.identityOf('c')).toBeUndefined()
  })

  it('handles what an unauthenticated peer sent once it authenticates', async () => {
    const { a, b } = await twoMembers()
    const c = await node('c', 2, b.replica) // a second device of account 2, sharing b's replica
    // c challenges a and a answers; a's own challenge to c is lost.
    a.session.peerUp('c')
    await pump([a, c], frames(c, c.session.peerUp('a')))
    expect(c.session.identityOf('a')).toBe(idFor(1))
    expect(a.session.identityOf('c')).toBeUndefined()
    let end: unknown
    c.session.events.on('exchangeEnd', (e) => (end = e))
    const opened = await c.session.open('a', c.replica.spaceId)
    // a keeps c's sync, challenges c again, c answers, a handles the kept sync.
    const seen = await pump([a, c], frames(c, opened.out))
    expect(types(seen)).toEqual(['sync', 'hello', 'auth', 'done'])
    expect(end).toMatchObject({ outcome: 'in_sync' })
  })

  it('never loops: an exchange stops after maxHops steps', async () => {
    const { a, b, obj } = await twoMembers()
    // A peer that opens an exchange, then answers every step with a new question about heads
    // nobody has.
    await set(b.replica, obj, 'x', 'differs')
    const fake = 'EwDGJ39WrAcMFU66ZWJHCvuM3mKsRgQ8w4Q2c9Y3vYrY'
    const opened = await b.session.open('a', b.replica.spaceId)
    const req = 'req' in opened ? opened.req : 0
    const ask = (hop: number) =>
      encodeMessage({ type: 'step', spaceId: a.replica.spaceId, req, hop, ranges: [], heads: [{ treeId: obj, heads: [fake], have: [] }], wants: [], changes: [] })
    let steps = 0
    const seen = await pump([a], [{ from: 'b', to: 'a', bytes: opened.out[0].bytes }], {
      tap: (f) => {
        if (f.to !== 'b') return f
        const m = decodeMessage(f.bytes)
        if (m.type !== 'step') return undefined
        steps++
        return { from: 'b', to: 'a', bytes: ask(m.hop + 1) }
      },
      max: 500,
    })
    expect(steps).toBeLessThanOrEqual(SYNC_LIMITS.maxHops / 2 + 1)
    expect(seen.length).toBeLessThan(SYNC_LIMITS.maxHops + 4)
    expect(a.session.countersOf('b').dropped.too_many_steps).toBe(1)
  })
})

describe('head-sync session, stale ACLs', () => {
  it('a member that a peer does not know yet is refused once, then served', async () => {
    const a = await node('a', 1)
    await a.replica.addMember(idFor(2), 'writer')
    await a.replica.createObject()
    const b = await node('b', 2, a.replica.spaceId)
    await link(a, b)
    await exchange(b, a)
    // The owner adds account 3; only c (account 3) and a learn of it.
    await a.replica.addMember(idFor(3), 'writer')
    const c = await node('c', 3, a.replica.spaceId)
    await link(a, c)
    await exchange(c, a)
    await modifyRecords(c.replica, c.replica.treeIds()[0], 'd', [{ id: 'c', ops: [{ type: '$set', path: 'v', value: 'from c' }] }])
    // b, which has not seen the record adding c, refuses c; c pushes the ACL chain and its writes.
    await link(b, c)
    const first = await exchange(c, b)
    expect(first.end).toMatchObject({ outcome: 'error', error: 'unknown_space' })
    expect(b.replica.acl.current().canRead(idFor(3))).toBe(true)
    const second = await exchange(c, b)
    expect(second.end?.outcome).toMatch(/synced|in_sync/)
    expect(headsOf(b.replica)).toBe(headsOf(c.replica))
  })
})

describe('head-sync session, large changes', () => {
  it('packs changes into messages within the limits, a change larger than the budget alone', async () => {
    const a = await node('a', 1)
    await a.replica.addMember(idFor(2), 'writer')
    const obj = await a.replica.createObject()
    for (let i = 0; i < 3; i++) await set(a.replica, obj, `big${i}`, 'x'.repeat(700_000))
    await set(a.replica, obj, 'huge', 'y'.repeat(1_500_000))
    const b = await node('b', 2, a.replica.spaceId)
    await link(a, b)
    const { seen } = await exchange(b, a)
    const steps = seen.filter((f) => decodeMessage(f.bytes).type === 'step')
    expect(steps.length).toBeGreaterThanOrEqual(3)
    for (const f of seen) expect(f.bytes.length).toBeLessThanOrEqual(SYNC_LIMITS.maxMessageBytes)
    expect(headsOf(b.replica)).toBe(headsOf(a.replica))
    expect((await b.replica.getRecord(obj, 'd', 'huge'))?.value).toEqual({ v: 'y'.repeat(1_500_000) })
  })
})

describe('head-sync session, answers ingested behind (ingestAhead)', () => {
  it('a multi-step transfer converges while each answer ingests as the next is handled', async () => {
    const a = await node('a', 1)
    await a.replica.addMember(idFor(2), 'writer')
    const obj = await a.replica.createObject()
    for (let i = 0; i < 4; i++) await set(a.replica, obj, `big${i}`, 'x'.repeat(600_000))
    const plain = await node('b', 2, a.replica.spaceId)
    const b = { ...plain }
    b.session = new (plain.session.constructor as typeof import('../../sync/protocol/session.ts').SyncSession)({
      host: { space: (id) => (id === plain.replica.spaceId ? plain.replica : undefined) },
      key: keyFor(2),
      peerId: 'b',
      crypto: await defaultCryptoProvider(),
      env: seededEnv(78),
      ingestAhead: 1,
    })
    await link(a, b)
    const { seen } = await exchange(b, a)
    expect(seen.filter((f) => decodeMessage(f.bytes).type === 'step').length).toBeGreaterThanOrEqual(2)
    // The last answer may still be applying; the next message about the space waits for it.
    const again = await exchange(b, a)
    expect(again.end?.outcome).toBe('in_sync')
    expect(headsOf(b.replica)).toBe(headsOf(a.replica))
  })
})
