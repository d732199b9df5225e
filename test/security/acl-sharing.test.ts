import { describe, expect, it } from 'vitest'
import { ed25519 } from '@noble/curves/ed25519.js'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { makeCancelChange, makeJoinChange } from '../../sync/replica/join-change.ts'
import { decodeInviteToken } from '../../sync/acl/invite-token.ts'
import { joinProofBytes } from '../../sync/acl/join-proof.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { LIMITS, REPLICA_LIMITS } from '../../sync/core/limits.ts'
import { decodeChange, signChange } from '../../sync/dag/change.ts'
import { modifyRecords } from '../../sync/space/modify.ts'
import type { AclRecord } from '../../sync/acl/records.ts'
import { wrapKeyTo } from '../../sync/crypto/wrap.ts'
import { identityOf, keyPairFromSeed, publicKeyOf, type KeyPair } from '../../sync/crypto/keys.ts'
import { signedAcl } from '../../sim/attacks.ts'
import { encodeMessage } from '../../sync/protocol/messages.ts'
import { link, node } from '../protocol/helpers.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'

/*
 * Attacks on the sharing records (docs/sharing.md, "ACL records"). Before this change the
 * replica refused every record type below but root/add/role/remove/rotate/merge as malformed,
 * and every record by a non-member as not_member: there was nothing to attack. These tests pin
 * what the new rules must still refuse now that non-members may author `join` and `cancel`.
 */

const OWNER = 1,
  ADMIN = 2,
  READER = 3,
  JOINER = 7,
  STRANGER = 8

async function space() {
  const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
  const inv = await owner.createInvite('writer')
  return { owner, inv, token: decodeInviteToken(inv.token) }
}

async function joinWith(spaceId: string, inviteId: string, inviteKey: Uint8Array, who: KeyPair, clock = 1_700_000_000_000) {
  const d = await deps(1)
  return makeJoinChange({ spaceId, inviteId, invitePrivateKey: inviteKey, me: who, crypto: d.crypto, env: seededEnv(1, clock) })
}

/** A signed ACL record by `key`, with chosen parents: what a hostile peer can send over head sync. */
async function aclBy(owner: SpaceReplica, key: KeyPair, record: AclRecord, prevIds = owner.acl.current().frontier as string[], lamport?: number) {
  const l = lamport ?? Math.max(...prevIds.map((p) => owner.acl.entries.get(p)!.lamport)) + 1
  return signedAcl((await deps(1)).crypto, key, owner.spaceId, prevIds, l, 1, 1, record)
}

const ingestOne = async (r: SpaceReplica, c: { id: string; raw: Uint8Array }) => r.ingest([{ id: c.id, raw: c.raw }])

describe('A joiner forges its join proof', () => {
  it("a proof by another key, or another joiner's proof replayed, is refused on both entries", async () => {
    const { owner, token } = await space()
    const wrongKey = new Uint8Array(32).fill(42)
    const forged = await joinWith(owner.spaceId, token.inviteId, wrongKey, keyFor(JOINER))
    expect(await owner.ingestJoin(forged.raw, idFor(JOINER))).toBeUndefined()
    expect((await ingestOne(owner, forged)).rejected).toEqual([{ id: forged.id, reason: 'not_member' }])
    // A stranger who saw JOINER's join on the wire reuses its proof under its own name.
    const honest = await joinWith(owner.spaceId, token.inviteId, token.privateKey, keyFor(JOINER))
    const proof = ed25519.sign(joinProofBytes(owner.spaceId, idFor(JOINER), token.inviteId), token.privateKey)
    const replay = await aclBy(owner, keyFor(STRANGER), { type: 'join', invite: token.inviteId, proof }, [owner.spaceId], 1)
    expect(await owner.ingestJoin(replay.raw, idFor(STRANGER))).toBeUndefined()
    expect((await ingestOne(owner, replay)).rejected).toEqual([{ id: replay.id, reason: 'not_member' }])
    // And the honest one is sent by someone else than its author.
    expect(await owner.ingestJoin(honest.raw, idFor(STRANGER))).toBeUndefined()
    expect(owner.acl.current().requests()).toEqual([])
  })
})

describe('A join cites a revoked or unknown invite', () => {
  it('a revoked invite: refused at the join entry; one taken in concurrently waits for a manager, never for itself', async () => {
    const { owner, inv, token } = await space()
    await owner.addMember(idFor(ADMIN), 'admin')
    const admin = await SpaceReplica.open(await deps(ADMIN), owner.spaceId, keyFor(ADMIN))
    await pushAll(owner, admin)
    await owner.revokeInvites([inv.recordId])
    const j = await joinWith(owner.spaceId, token.inviteId, token.privateKey, keyFor(JOINER))
    expect(await owner.ingestJoin(j.raw, idFor(JOINER))).toBeUndefined()
    // The admin had not seen the revocation: it takes the join in, as a request a manager
    // decides. Nothing grants it: the joiner stays no member on every replica.
    expect(await admin.ingestJoin(j.raw, idFor(JOINER))).toBe('pending')
    await pushAll(owner, admin)
    await pushAll(admin, owner)
    for (const r of [owner, admin]) {
      expect(r.joinStatus(idFor(JOINER))).toBe('pending')
      expect(r.acl.current().roleOf(idFor(JOINER))).toBe('none')
    }
    await owner.declineJoin(j.id)
    expect(owner.joinStatus(idFor(JOINER))).toBe('declined')
  })

  it('a revoked guest key: a guest auto-accepted concurrently with the revocation is admitted nowhere, and no later key reaches it', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    await owner.addMember(idFor(ADMIN), 'admin')
    const obj = await owner.createObject()
    const g = await owner.createInvite('guest')
    const t = decodeInviteToken(g.token)
    const admin = await SpaceReplica.open(await deps(ADMIN), owner.spaceId, keyFor(ADMIN))
    await pushAll(owner, admin)
    // The owner revokes the guest key while the admin's device, not knowing, accepts a guest.
    await owner.revokeGuest()
    const j = await joinWith(owner.spaceId, t.inviteId, t.privateKey, keyFor(JOINER))
    expect(await admin.ingestJoin(j.raw, idFor(JOINER))).toBe('accepted')
    await pushAll(admin, owner)
    await pushAll(owner, admin)
    for (const r of [owner, admin]) {
      const st = r.acl.current()
      expect(st.roleOf(idFor(JOINER))).toBe('none')
      expect(st.readers()).not.toContain(idFor(JOINER))
      expect(r.joinStatus(idFor(JOINER))).toBe('declined')
    }
    expect(await owner.stateDigest()).toBe(await admin.stateDigest())
    // Whatever the managers write next is sealed under a key the guest cannot reach.
    await owner.rotateReadKey()
    const w = await modifyRecords(owner, obj, 'd', [{ id: 'after', ops: [{ type: '$set', path: 'v', value: 1 }] }])
    const keyId = decodeChange((await owner.allChanges()).find((c) => c.id === w.changeId)!.raw).readKeyId
    expect(owner.acl.current().reaches(idFor(JOINER), keyId)).toBe(false)
  })

  it('an unknown invite id: refused at the entry; through sync it parks, bounded, and never applies', async () => {
    const { owner, token } = await space()
    const bogus = 'J'.repeat(44)
    const j = await joinWith(owner.spaceId, bogus, token.privateKey, keyFor(JOINER))
    expect(await owner.ingestJoin(j.raw, idFor(JOINER))).toBeUndefined()
    const rep = await owner.ingest([{ id: j.id, raw: j.raw }], { origin: 'peer' })
    expect(rep.accepted).toEqual([])
    expect(rep.missing).toContain(bogus)
    expect(owner.parkedBytesFrom('peer')).toBeGreaterThan(0)
    expect(owner.parkedBytesFrom('peer')).toBeLessThanOrEqual(REPLICA_LIMITS.maxParkedBytesPerOrigin)
    expect(owner.acl.has(j.id)).toBe(false)
    // A record that is not an invite does not stand in for one.
    const notInvite = await joinWith(owner.spaceId, owner.spaceId, token.privateKey, keyFor(JOINER))
    expect((await ingestOne(owner, notInvite)).rejected).toEqual([{ id: notInvite.id, reason: 'malformed' }])
  })
})

describe("Someone cancels another account's join", () => {
  it('a cancel by anyone but the joiner is refused, and the request stays pending', async () => {
    const { owner, token } = await space()
    const j = await joinWith(owner.spaceId, token.inviteId, token.privateKey, keyFor(JOINER))
    await owner.ingestJoin(j.raw, idFor(JOINER))
    const d = await deps(STRANGER)
    const cancel = await makeCancelChange({ spaceId: owner.spaceId, joinId: j.id, me: keyFor(STRANGER), crypto: d.crypto, env: d.env })
    expect(await owner.ingestJoin(cancel.raw, idFor(STRANGER))).toBeUndefined()
    expect((await ingestOne(owner, cancel)).rejected).toEqual([{ id: cancel.id, reason: 'not_member' }])
    // A cancel that skips its join (cites the root) is malformed.
    const skip = await aclBy(owner, keyFor(JOINER), { type: 'cancel', request: j.id }, [owner.spaceId], 1)
    expect((await ingestOne(owner, skip)).rejected).toEqual([{ id: skip.id, reason: 'malformed' }])
    expect(owner.joinStatus(idFor(JOINER))).toBe('pending')
  })
})

describe('A non-member authors manager records', () => {
  it('invite, add, decline and uninvite by a non-member are refused as not_member', async () => {
    const { owner, inv, token } = await space()
    const j = await joinWith(owner.spaceId, token.inviteId, token.privateKey, keyFor(JOINER))
    await owner.ingestJoin(j.raw, idFor(JOINER))
    const key = wrapKeyTo(seededEnv(5), publicKeyOf(idFor(JOINER)), new Uint8Array(32))
    const records: AclRecord[] = [
      { type: 'invite', key: idFor(STRANGER), permission: 'writer' },
      { type: 'add', identity: idFor(JOINER), role: 'writer', keyId: owner.acl.current().readKeyId!, key, request: j.id },
      { type: 'decline', request: j.id },
      { type: 'uninvite', invites: [inv.recordId] },
    ]
    for (const record of records) {
      for (const who of [STRANGER, JOINER]) {
        const c = await aclBy(owner, keyFor(who), record)
        expect((await ingestOne(owner, c)).rejected).toEqual([{ id: c.id, reason: 'not_member' }])
        // And through the join entry, which takes joins and cancels only.
        expect(await owner.ingestJoin(c.raw, idFor(who))).toBeUndefined()
      }
    }
    expect(owner.joinStatus(idFor(JOINER))).toBe('pending')
    expect(
      owner.acl
        .current()
        .invites()
        .map((i) => i.recordId),
    ).toEqual([inv.recordId])
  })
})

describe('A join record grants its author a role', () => {
  it('a join with a role field is malformed; a pending joiner has role none and reads no key', async () => {
    const { owner, token } = await space()
    const proof = ed25519.sign(joinProofBytes(owner.spaceId, idFor(JOINER), token.inviteId), token.privateKey)
    const withRole = await aclBy(owner, keyFor(JOINER), { type: 'join', invite: token.inviteId, proof, role: 'admin' } as unknown as AclRecord, [owner.spaceId], 1)
    expect((await ingestOne(owner, withRole)).rejected).toEqual([{ id: withRole.id, reason: 'malformed' }])
    const j = await joinWith(owner.spaceId, token.inviteId, token.privateKey, keyFor(JOINER))
    expect(await owner.ingestJoin(j.raw, idFor(JOINER))).toBe('pending')
    const st = owner.acl.current()
    expect(st.roleOf(idFor(JOINER))).toBe('none')
    expect(st.reaches(idFor(JOINER), st.readKeyId!)).toBe(false)
    // Nor can it act on its own join: an add of itself is refused.
    const key = wrapKeyTo(seededEnv(5), publicKeyOf(idFor(JOINER)), new Uint8Array(32))
    const self = await aclBy(owner, keyFor(JOINER), { type: 'add', identity: idFor(JOINER), role: 'writer', keyId: st.readKeyId!, key, request: j.id }, [j.id])
    expect((await ingestOne(owner, self)).rejected).toEqual([{ id: self.id, reason: 'not_member' }])
    // Nor is its join ever cited by a member's record (it is no valid record).
    await owner.rotateReadKey()
    expect(owner.acl.history(owner.acl.current().frontier as string[]).some((e) => e.id === j.id)).toBe(false)
  })
})

describe('A member publishes a profile about another identity', () => {
  it("a profile names no subject: one with an identity field is malformed; a non-member's is refused", async () => {
    const { owner } = await space()
    await owner.addMember(idFor(READER), 'reader')
    const keyId = owner.acl.current().readKeyId!
    const other = await aclBy(owner, keyFor(READER), { type: 'profile', sealed: new Uint8Array(40), keyId, identity: idFor(OWNER) } as unknown as AclRecord)
    expect((await ingestOne(owner, other)).rejected).toEqual([{ id: other.id, reason: 'malformed' }])
    const stranger = await aclBy(owner, keyFor(STRANGER), { type: 'profile', sealed: new Uint8Array(40), keyId })
    expect((await ingestOne(owner, stranger)).rejected).toEqual([{ id: stranger.id, reason: 'not_member' }])
    // A reader's own profile lands under its own identity only.
    const mine = await aclBy(owner, keyFor(READER), { type: 'profile', sealed: new Uint8Array(40), keyId })
    expect((await ingestOne(owner, mine)).rejected).toEqual([])
    expect([...owner.acl.current().profiles().keys()]).toEqual([idFor(READER)])
    // Under a key the space does not have: malformed-at-its-state, refused.
    const noKey = await aclBy(owner, keyFor(READER), { type: 'profile', sealed: new Uint8Array(40), keyId: 'K'.repeat(44) })
    expect((await ingestOne(owner, noKey)).rejected).toEqual([{ id: noKey.id, reason: 'read_only' }])
  })
})

describe('A reader writes an invite', () => {
  it('refused as read_only from a peer; refused locally; a writer cannot either', async () => {
    const { owner } = await space()
    await owner.addMember(idFor(READER), 'reader')
    await owner.addMember(idFor(JOINER), 'writer')
    for (const who of [READER, JOINER]) {
      const c = await aclBy(owner, keyFor(who), { type: 'invite', key: idFor(STRANGER), permission: 'reader' })
      expect((await ingestOne(owner, c)).rejected).toEqual([{ id: c.id, reason: 'read_only' }])
    }
    const reader = await SpaceReplica.open(await deps(READER), owner.spaceId, keyFor(READER))
    await pushAll(owner, reader)
    await expect(reader.createInvite('reader')).rejects.toMatchObject({ code: 'space.read_only' })
    // An admin's guest invite: owner only.
    await owner.addMember(idFor(ADMIN), 'admin')
    const g = await aclBy(owner, keyFor(ADMIN), { type: 'invite', key: idFor(STRANGER), permission: 'guest' })
    expect((await ingestOne(owner, g)).rejected).toEqual([{ id: g.id, reason: 'read_only' }])
  })
})

describe('A removed admin mints invites after its removal', () => {
  it('citing the state after the removal is refused; backdated onto the state before it, the invite is void and no join gets through it', async () => {
    const { owner } = await space()
    await owner.addMember(idFor(ADMIN), 'admin')
    const before = [...owner.acl.current().frontier]
    await owner.removeMember(idFor(ADMIN))
    const seed = new Uint8Array(32).fill(9)
    const inviteKey = keyPairFromSeed(seed)
    const record: AclRecord = { type: 'invite', key: toId(inviteKey), permission: 'writer' }
    const after = await aclBy(owner, keyFor(ADMIN), record)
    expect((await ingestOne(owner, after)).rejected).toEqual([{ id: after.id, reason: 'not_member' }])
    const backdated = await aclBy(owner, keyFor(ADMIN), record, before)
    expect((await ingestOne(owner, backdated)).rejected).toEqual([])
    expect(owner.acl.current().isVoid(backdated.id)).toBe(true)
    expect(
      owner.acl
        .current()
        .invites()
        .some((i) => i.recordId === backdated.id),
    ).toBe(false)
    const j = await joinWith(owner.spaceId, backdated.id, seed, keyFor(JOINER))
    expect(await owner.ingestJoin(j.raw, idFor(JOINER))).toBeUndefined()
    // Through sync the join is admitted (its proof is good) but never pending: nothing accepts it.
    await ingestOne(owner, j)
    expect(owner.joinStatus(idFor(JOINER))).toBe('declined')
  })
})

describe('A token holder floods join records', () => {
  it('one pending request per joiner; at most maxPendingJoinRequests pending per space', async () => {
    const { owner, token } = await space()
    const first = await joinWith(owner.spaceId, token.inviteId, token.privateKey, keyFor(JOINER))
    expect(await owner.ingestJoin(first.raw, idFor(JOINER))).toBe('pending')
    for (let i = 1; i <= 5; i++) {
      const again = await joinWith(owner.spaceId, token.inviteId, token.privateKey, keyFor(JOINER), 1_800_000_000_000 + i)
      expect(await owner.ingestJoin(again.raw, idFor(JOINER))).toBe('pending')
      expect(owner.acl.has(again.id)).toBe(false)
    }
    // All at once: the bound is judged inside the replica's queue, so no two take the last slot.
    const joins = []
    for (let i = 0; i < LIMITS.maxPendingJoinRequests + 20; i++) {
      const who = keyPairFromSeed(seedFor(i))
      joins.push({ who, j: await joinWith(owner.spaceId, token.inviteId, token.privateKey, who) })
    }
    const answers = await Promise.all(joins.map(({ who, j }) => owner.ingestJoin(j.raw, toId(who))))
    const taken = 1 + answers.filter((a) => a === 'pending').length
    const refused = answers.filter((a) => a === undefined).length
    expect(taken).toBe(LIMITS.maxPendingJoinRequests)
    expect(refused).toBe(21)
    expect(
      owner.acl
        .current()
        .requests()
        .filter((q) => q.status === 'pending'),
    ).toHaveLength(LIMITS.maxPendingJoinRequests)
  }, 60_000)
})

describe('A joiner loops join and cancel', () => {
  it('a second cancel writes nothing; past maxJoinRequestsPerJoiner requests its joins are refused', async () => {
    const { owner, token } = await space()
    const d = await deps(JOINER)
    let clock = 1_800_000_000_000
    for (let round = 0; round < LIMITS.maxJoinRequestsPerJoiner; round++) {
      const j = await joinWith(owner.spaceId, token.inviteId, token.privateKey, keyFor(JOINER), (clock += 10))
      expect(await owner.ingestJoin(j.raw, idFor(JOINER))).toBe('pending')
      const c1 = await makeCancelChange({ spaceId: owner.spaceId, joinId: j.id, me: keyFor(JOINER), crypto: d.crypto, env: seededEnv(1, (clock += 10)) })
      const c2 = await makeCancelChange({ spaceId: owner.spaceId, joinId: j.id, me: keyFor(JOINER), crypto: d.crypto, env: seededEnv(1, (clock += 10)) })
      expect(await owner.ingestJoin(c1.raw, idFor(JOINER))).toBe('cancelled')
      expect(await owner.ingestJoin(c2.raw, idFor(JOINER))).toBe('cancelled')
      expect(owner.acl.has(c2.id)).toBe(false)
    }
    const size = owner.acl.entries.size
    const more = await joinWith(owner.spaceId, token.inviteId, token.privateKey, keyFor(JOINER), clock + 10)
    expect(await owner.ingestJoin(more.raw, idFor(JOINER))).toBeUndefined()
    expect(owner.acl.entries.size).toBe(size)
  })
})

describe('A third account writes into a one-to-one space', () => {
  it('its changes and records are refused; a pair member cannot add anyone', async () => {
    const a = await SpaceReplica.openPair(await deps(JOINER), keyFor(JOINER), idFor(STRANGER))
    const key = wrapKeyTo(seededEnv(5), publicKeyOf(idFor(OWNER)), new Uint8Array(32))
    const add = await aclBy(a, keyFor(JOINER), { type: 'add', identity: idFor(OWNER), role: 'writer', keyId: a.spaceId, key })
    expect((await ingestOne(a, add)).rejected).toEqual([{ id: add.id, reason: 'read_only' }])
    const third = await aclBy(a, keyFor(OWNER), { type: 'profile', sealed: new Uint8Array(40), keyId: a.spaceId })
    expect((await ingestOne(a, third)).rejected).toEqual([{ id: third.id, reason: 'not_member' }])
    const obj = await signChange((await deps(1)).crypto, keyFor(OWNER), {
      spaceId: a.spaceId,
      treeId: '',
      prevIds: [],
      aclHeadId: a.spaceId,
      seq: 1,
      lamport: 0,
      timestamp: 1,
      readKeyId: '',
      payload: encodeCanonical({ kind: 'object', nonce: new Uint8Array(16) }),
    })
    expect((await ingestOne(a, obj)).rejected).toEqual([{ id: obj.id, reason: 'not_member' }])
  })
})

function seedFor(i: number): Uint8Array {
  const s = new Uint8Array(32)
  s[0] = 200
  s[1] = i & 0xff
  s[2] = i >> 8
  return s
}

const toId = (k: KeyPair): string => identityOf(k.publicKey)

describe('A non-member pushes its join through head sync', () => {
  it('a step answer leading with join records is not taken in: joins enter through the join message only', async () => {
    const a = await node('a', OWNER)
    const inv = await a.replica.createInvite('writer')
    const t = decodeInviteToken(inv.token)
    const stranger = await node('s', JOINER, a.replica.spaceId)
    await link(a, stranger)
    const j = await joinWith(a.replica.spaceId, t.inviteId, t.privateKey, keyFor(JOINER))
    await a.session.handle('s', encodeMessage({ type: 'step', spaceId: a.replica.spaceId, req: 7, hop: 1, ranges: [], heads: [], wants: [], changes: [j.raw] }))
    expect(a.replica.acl.has(j.id)).toBe(false)
    expect(a.session.countersOf('s').rejected.not_member).toBe(1)
    // The same bytes through the join entry are a pending request.
    expect(await a.replica.ingestJoin(j.raw, idFor(JOINER))).toBe('pending')
  })
})

describe("A member wears another member's profile", () => {
  it("sealed bytes copied into its own profile record open under nobody's name", async () => {
    const { owner } = await space()
    await owner.addMember(idFor(READER), 'reader')
    await owner.setProfile({ name: 'The Owner' })
    const copied = owner.acl.current().profiles().get(idFor(OWNER))!
    const fake = await aclBy(owner, keyFor(READER), { type: 'profile', sealed: copied.sealed, keyId: copied.keyId })
    expect((await ingestOne(owner, fake)).rejected).toEqual([])
    const byId = new Map(owner.profiles().map((p) => [p.identity, p.profile]))
    expect(byId.get(idFor(OWNER))).toEqual({ name: 'The Owner' })
    expect(byId.get(idFor(READER))).toBeUndefined()
  })
})
