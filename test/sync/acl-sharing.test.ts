import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { makeCancelChange, makeJoinChange } from '../../sync/replica/join-change.ts'
import { decodeInviteToken, encodeInviteToken } from '../../sync/acl/invite-token.ts'
import { pairReadKey, pairSpaceId } from '../../sync/acl/pair.ts'
import { joinProofBytes } from '../../sync/acl/join-proof.ts'
import { Keyring } from '../../sync/acl/keyring.ts'
import { modifyRecords } from '../../sync/space/modify.ts'
import { decodeChange } from '../../sync/dag/change.ts'
import { decodeAclRecord, encodeAclRecord, InvalidAclRecord, type AclRecord } from '../../sync/acl/records.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'

const OWNER = 1,
  ADMIN = 2,
  JOINER = 7,
  OTHER = 8

const set = (r: SpaceReplica, obj: string, id: string, v: unknown) => modifyRecords(r, obj, 'd', [{ id, ops: [{ type: '$set', path: 'v', value: v }] }])

async function join(token: string, who: number, metadata?: { name?: string }) {
  const t = decodeInviteToken(token)
  const r = await deps(who)
  return makeJoinChange({ spaceId: t.spaceId, inviteId: t.inviteId, invitePrivateKey: t.privateKey, me: keyFor(who), metadata, crypto: r.crypto, env: r.env })
}

async function member(owner: SpaceReplica, n: number) {
  const r = await SpaceReplica.open(await deps(n), owner.spaceId, keyFor(n))
  expect((await pushAll(owner, r)).rejected).toEqual([])
  return r
}

describe('ACL sharing: invites and joins', () => {
  it('invite, join, accept: the joiner reads what was written before and after', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    const obj = await owner.createObject()
    await set(owner, obj, 'a', 1)
    const inv = await owner.createInvite('writer', { replaces: true })
    expect(owner.acl.current().invites()).toEqual([{ recordId: inv.recordId, key: expect.any(String), permission: 'writer', author: idFor(OWNER) }])
    const j = await join(inv.token, JOINER, { name: 'Jo' })
    expect(await owner.ingestJoin(j.raw, idFor(JOINER))).toBe('pending')
    // Asking again (the joiner repeats) changes nothing.
    expect(await owner.ingestJoin(j.raw, idFor(JOINER))).toBe('pending')
    const [req] = owner.acl.current().requests()
    expect(req).toMatchObject({ recordId: j.id, joiner: idFor(JOINER), role: 'writer', metadata: { name: 'Jo' }, status: 'pending' })
    // A join confers nothing: the joiner is no member and reads nothing.
    expect(owner.acl.current().roleOf(idFor(JOINER))).toBe('none')
    await owner.acceptJoin(j.id)
    expect(owner.joinStatus(idFor(JOINER))).toBe('accepted')
    expect(owner.acl.current().roleOf(idFor(JOINER))).toBe('writer')
    await set(owner, obj, 'b', 2)
    const joiner = await member(owner, JOINER)
    expect((await joiner.getRecord(obj, 'd', 'a'))?.value).toEqual({ v: 1 })
    expect((await joiner.getRecord(obj, 'd', 'b'))?.value).toEqual({ v: 2 })
    await set(joiner, obj, 'c', 3)
    await pushAll(joiner, owner)
    expect((await owner.getRecord(obj, 'd', 'c'))?.value).toEqual({ v: 3 })
    await expect(owner.acceptJoin(j.id)).rejects.toMatchObject({ code: 'space.join_not_pending' })
  })

  it('decline: the request is declined and cannot be accepted after', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    const inv = await owner.createInvite('reader')
    const j = await join(inv.token, JOINER)
    expect(await owner.ingestJoin(j.raw, idFor(JOINER))).toBe('pending')
    await owner.declineJoin(j.id)
    expect(owner.joinStatus(idFor(JOINER))).toBe('declined')
    await expect(owner.acceptJoin(j.id)).rejects.toMatchObject({ code: 'space.join_not_pending' })
    expect(owner.acl.current().roleOf(idFor(JOINER))).toBe('none')
  })

  it('cancel: the joiner withdraws; a later join re-requests', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    const inv = await owner.createInvite('reader')
    const j = await join(inv.token, JOINER)
    await owner.ingestJoin(j.raw, idFor(JOINER))
    const d = await deps(JOINER)
    const cancel = await makeCancelChange({ spaceId: owner.spaceId, joinId: j.id, me: keyFor(JOINER), crypto: d.crypto, env: d.env })
    expect(await owner.ingestJoin(cancel.raw, idFor(JOINER))).toBe('cancelled')
    await expect(owner.acceptJoin(j.id)).rejects.toMatchObject({ code: 'space.join_not_pending' })
    const again = await makeJoinChange({
      ...decodeInviteToken(inv.token),
      invitePrivateKey: decodeInviteToken(inv.token).privateKey,
      me: keyFor(JOINER),
      crypto: d.crypto,
      env: seededEnv(99, 1_800_000_000_000),
    })
    expect(again.id).not.toBe(j.id)
    expect(await owner.ingestJoin(again.raw, idFor(JOINER))).toBe('pending')
  })

  it('uninvite: a join through the revoked invite is refused', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    const inv = await owner.createInvite('reader')
    await owner.revokeInvites([inv.recordId])
    expect(owner.acl.current().invites()).toEqual([])
    expect(await owner.ingestJoin((await join(inv.token, JOINER)).raw, idFor(JOINER))).toBeUndefined()
    await expect(owner.revokeInvites([inv.recordId])).rejects.toMatchObject({ code: 'invite.not_found' })
  })

  it('replaces: a new invite revokes every prior non-guest invite, not the guest key', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    const a = await owner.createInvite('reader')
    const b = await owner.createInvite('writer')
    const g = await owner.createInvite('guest')
    const c = await owner.createInvite('reader', { replaces: true })
    expect(
      owner.acl
        .current()
        .invites()
        .map((i) => i.recordId)
        .sort(),
    ).toEqual([g.recordId, c.recordId].sort())
    expect(await owner.ingestJoin((await join(a.token, JOINER)).raw, idFor(JOINER))).toBeUndefined()
    expect(await owner.ingestJoin((await join(b.token, JOINER)).raw, idFor(JOINER))).toBeUndefined()
    expect(await owner.ingestJoin((await join(c.token, JOINER)).raw, idFor(JOINER))).toBe('pending')
  })

  it("accept concurrent with the joiner's cancel: the valid accept wins on every replica", async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    await owner.addMember(idFor(ADMIN), 'admin')
    const admin = await member(owner, ADMIN)
    const inv = await owner.createInvite('reader')
    await pushAll(owner, admin)
    const j = await join(inv.token, JOINER)
    await owner.ingestJoin(j.raw, idFor(JOINER))
    await admin.ingestJoin(j.raw, idFor(JOINER))
    const d = await deps(JOINER)
    const cancel = await makeCancelChange({ spaceId: owner.spaceId, joinId: j.id, me: keyFor(JOINER), crypto: d.crypto, env: d.env })
    expect(await owner.ingestJoin(cancel.raw, idFor(JOINER))).toBe('cancelled')
    await admin.acceptJoin(j.id)
    await pushAll(admin, owner)
    await pushAll(owner, admin)
    for (const r of [owner, admin]) {
      expect(r.joinStatus(idFor(JOINER))).toBe('accepted')
      expect(r.acl.current().roleOf(idFor(JOINER))).toBe('reader')
    }
    expect(await owner.stateDigest()).toBe(await admin.stateDigest())
  })

  it("a removed member's copy does not take joins in", async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    await owner.addMember(idFor(ADMIN), 'admin')
    const admin = await member(owner, ADMIN)
    const inv = await owner.createInvite('reader')
    await owner.removeMember(idFor(ADMIN))
    await pushAll(owner, admin)
    expect(await admin.ingestJoin((await join(inv.token, JOINER)).raw, idFor(JOINER))).toBeUndefined()
  })

  it('a member request taken in before its invite was replaced stays pending; a manager decides it', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    const inv = await owner.createInvite('reader')
    const j = await join(inv.token, JOINER)
    await owner.ingestJoin(j.raw, idFor(JOINER))
    await owner.createInvite('writer', { replaces: true })
    expect(
      owner.acl
        .current()
        .invites()
        .some((i) => i.recordId === inv.recordId),
    ).toBe(false)
    expect(owner.joinStatus(idFor(JOINER))).toBe('pending')
    await owner.acceptJoin(j.id)
    expect(owner.acl.current().roleOf(idFor(JOINER))).toBe('reader')
  })

  it('a guest request through a revoked guest key is declined', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    await owner.addMember(idFor(ADMIN), 'reader')
    const reader = await member(owner, ADMIN)
    const g = await owner.createInvite('guest')
    await pushAll(owner, reader)
    // A reader's replica takes the join in (it does not manage, so it does not accept it).
    expect(await reader.ingestJoin((await join(g.token, JOINER)).raw, idFor(JOINER))).toBe('pending')
    await owner.revokeGuest()
    await pushAll(owner, reader)
    await pushAll(reader, owner)
    expect(owner.joinStatus(idFor(JOINER))).toBe('declined')
    expect(owner.acl.current().roleOf(idFor(JOINER))).toBe('none')
  })
})

describe('ACL sharing: the guest key', () => {
  it('a manager device accepts guest joins by itself; revoke rotates past every guest', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    await owner.addMember(idFor(ADMIN), 'admin')
    const obj = await owner.createObject()
    const g = await owner.createInvite('guest')
    expect(decodeInviteToken(g.token).guest).toBe(true)
    // Another manager's device sees the join first and accepts it.
    const admin = await member(owner, ADMIN)
    expect(await admin.ingestJoin((await join(g.token, JOINER)).raw, idFor(JOINER))).toBe('accepted')
    expect(admin.acl.current().roleOf(idFor(JOINER))).toBe('guest')
    // The owner's device auto-accepts the same request concurrently: both converge.
    expect(await owner.ingestJoin((await join(g.token, JOINER)).raw, idFor(JOINER))).toBeDefined()
    await pushAll(admin, owner)
    await pushAll(owner, admin)
    expect(owner.acl.current().roleOf(idFor(JOINER))).toBe('guest')
    expect(await owner.stateDigest()).toBe(await admin.stateDigest())
    expect(owner.acl.current().readers()).toEqual(admin.acl.current().readers())
    const guest = await member(owner, JOINER)
    await expect(set(guest, obj, 'x', 1)).rejects.toMatchObject({ code: 'space.read_only' })
    await set(owner, obj, 'before', 1)
    await pushAll(owner, guest)
    expect((await guest.getRecord(obj, 'd', 'before'))?.value).toEqual({ v: 1 })
    // Revoke: the guest invite dies, the guest is removed, and the key moves past it.
    await owner.revokeGuest()
    expect(owner.acl.current().invites()).toEqual([])
    expect(owner.acl.current().roleOf(idFor(JOINER))).toBe('none')
    const w = await set(owner, obj, 'after', 2)
    const keyId = decodeChange((await owner.allChanges()).find((c) => c.id === w.changeId)!.raw).readKeyId
    expect(new Keyring(owner.acl, keyFor(JOINER)).get(keyId)).toBeUndefined()
    await pushAll(owner, guest)
    expect(await guest.getRecord(obj, 'd', 'after')).toBeUndefined()
    expect((await guest.getRecord(obj, 'd', 'before'))?.value).toEqual({ v: 1 })
    expect(await owner.ingestJoin((await join(g.token, OTHER)).raw, idFor(OTHER))).toBeUndefined()
  })

  it('only the owner creates the guest key', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    await owner.addMember(idFor(ADMIN), 'admin')
    const admin = await member(owner, ADMIN)
    await expect(admin.createInvite('guest')).rejects.toMatchObject({ code: 'space.read_only' })
    await expect(admin.createInvite('writer')).resolves.toBeDefined()
  })
})

describe('ACL sharing: one-to-one', () => {
  const open = async (n: number, other: number) => SpaceReplica.openPair(await deps(n), keyFor(n), idFor(other))

  it('both sides derive the same space and key, and read each other', async () => {
    const a = await open(JOINER, OTHER)
    const b = await SpaceReplica.create(await deps(OTHER), keyFor(OTHER), { pair: idFor(JOINER) })
    expect(a.spaceId).toBe(b.spaceId)
    expect(a.spaceId).toBe(pairSpaceId(idFor(OTHER), idFor(JOINER)))
    expect(pairReadKey(keyFor(JOINER).privateKey, idFor(OTHER), a.spaceId)).toEqual(pairReadKey(keyFor(OTHER).privateKey, idFor(JOINER), a.spaceId))
    const st = a.acl.current()
    expect(st.roleOf(idFor(JOINER))).toBe('writer')
    expect(st.roleOf(idFor(OTHER))).toBe('writer')
    expect(st.readKeyId).toBe(a.spaceId)
    const obj = await a.createObject()
    await set(a, obj, 'hi', 'from a')
    expect((await pushAll(a, b)).rejected).toEqual([])
    expect((await b.getRecord(obj, 'd', 'hi'))?.value).toEqual({ v: 'from a' })
    await set(b, obj, 'hi', 'from b')
    await pushAll(b, a)
    expect(await a.stateDigest()).toBe(await b.stateDigest())
    // A third account reaches no key.
    expect(new Keyring(a.acl, keyFor(OWNER)).get(a.spaceId)).toBeUndefined()
    // Opening again is a no-op.
    expect((await SpaceReplica.openPair(await deps(JOINER), keyFor(JOINER), idFor(OTHER))).spaceId).toBe(a.spaceId)
  })

  it('nobody adds, removes, rotates or invites; self-pairing is refused', async () => {
    const a = await open(JOINER, OTHER)
    await expect(a.addMember(idFor(OWNER), 'reader')).rejects.toMatchObject({ code: 'space.read_only' })
    await expect(a.removeMember(idFor(OTHER))).rejects.toMatchObject({ code: 'space.read_only' })
    await expect(a.rotateReadKey()).rejects.toMatchObject({ code: 'space.read_only' })
    await expect(a.createInvite('reader')).rejects.toMatchObject({ code: 'space.read_only' })
    await expect(open(JOINER, JOINER)).rejects.toMatchObject({ code: 'request.invalid_field' })
  })

  it('profiles travel sealed under the agreed key', async () => {
    const a = await open(JOINER, OTHER)
    const b = await open(OTHER, JOINER)
    const first = await a.setProfile({ name: 'Ann', description: 'hi' })
    // The same profile again writes nothing.
    expect(await a.setProfile({ description: 'hi', name: 'Ann' })).toBe(first)
    await pushAll(a, b)
    expect(b.profiles()).toEqual([{ identity: idFor(JOINER), recordId: expect.any(String), profile: { name: 'Ann', description: 'hi' } }])
  })
})

describe('ACL sharing: profiles and tokens', () => {
  it('a profile is sealed: members open it, a non-member sees it without fields', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    await owner.addMember(idFor(ADMIN), 'reader')
    const reader = await member(owner, ADMIN)
    await reader.setProfile({ name: 'Rea', iconCid: 'bafy' })
    await pushAll(reader, owner)
    expect(owner.profiles()).toEqual([{ identity: idFor(ADMIN), recordId: expect.any(String), profile: { name: 'Rea', iconCid: 'bafy' } }])
    const stranger = await SpaceReplica.open(await deps(OTHER), owner.spaceId, keyFor(OTHER))
    await pushAll(owner, stranger)
    expect(stranger.profiles()).toEqual([{ identity: idFor(ADMIN), recordId: expect.any(String) }])
  })

  it('tokens round-trip; junk throws invite.invalid', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    const inv = await owner.createInvite('reader')
    const t = decodeInviteToken(inv.token)
    expect(t).toEqual({ spaceId: owner.spaceId, inviteId: inv.recordId, privateKey: inv.privateKey, guest: false })
    expect(encodeInviteToken(t.spaceId, t.privateKey, { inviteId: t.inviteId })).toBe(inv.token)
    for (const bad of ['', 'abc', '0OIl', inv.token.slice(1), inv.token + '1', 'x'.repeat(500), 42]) {
      expect(() => decodeInviteToken(bad)).toThrow(expect.objectContaining({ code: 'invite.invalid' }))
    }
  })

  it('join proof bytes bind space, joiner and invite', () => {
    const a = joinProofBytes('S', 'J', 'I')
    expect(joinProofBytes('S', 'J', 'I')).toEqual(a)
    expect(joinProofBytes('S', 'J', 'I2')).not.toEqual(a)
    expect(joinProofBytes('S', 'J2', 'I')).not.toEqual(a)
    expect(joinProofBytes('S2', 'J', 'I')).not.toEqual(a)
  })
})

describe('ACL sharing: strict decoders', () => {
  const A = idFor(1),
    B = idFor(2)
  const proof = new Uint8Array(64)
  it('decodes every sharing record and refuses unknown fields and bad values', () => {
    const good: AclRecord[] = [
      { type: 'invite', key: A, permission: 'guest' },
      { type: 'invite', key: A, permission: 'reader', replaces: true },
      { type: 'uninvite', invites: [A, B].sort() },
      { type: 'join', invite: A, proof, metadata: { name: 'n', iconCid: 'c' } },
      { type: 'join', invite: A, proof },
      { type: 'cancel', request: A },
      { type: 'decline', request: A },
      { type: 'profile', sealed: new Uint8Array(100), keyId: A },
      { type: 'add', identity: A, role: 'guest', keyId: B, key: new Uint8Array(8), request: A },
      { type: 'root', owner: '', pair: [A, B].sort() as [string, string] },
    ]
    for (const r of good) expect(decodeAclRecord(encodeAclRecord(r))).toEqual(r)
    const bad: unknown[] = [
      { type: 'invite', key: A, permission: 'admin' },
      { type: 'invite', key: A, permission: 'reader', replaces: false },
      { type: 'invite', key: A, permission: 'reader', extra: 1 },
      { type: 'uninvite', invites: [] },
      { type: 'uninvite', invites: [B, A].sort().reverse() },
      { type: 'join', invite: A, proof: new Uint8Array(63) },
      { type: 'join', invite: A, proof, metadata: { name: 'x'.repeat(257) } },
      { type: 'join', invite: A, proof, metadata: { role: 'admin' } },
      { type: 'join', invite: A, proof, role: 'admin' },
      { type: 'cancel', request: A, identity: B },
      { type: 'decline', request: '' },
      { type: 'profile', sealed: new Uint8Array(16 * 1024 + 1), keyId: A },
      { type: 'profile', sealed: new Uint8Array(10), keyId: A, identity: B },
      { type: 'add', identity: A, role: 'reader', keyId: B, key: new Uint8Array(8), request: 'not base58!' },
      { type: 'root', owner: '', pair: [A, A] },
      { type: 'root', owner: '', pair: [A, B].sort().reverse() },
      { type: 'root', owner: A, pair: [A, B].sort() },
      { type: 'root', owner: '', pair: [A, B].sort(), seed: 's' },
      { type: 'root', owner: A, extra: true },
      [{ type: 'merge' }],
    ]
    for (const r of bad) expect(() => decodeAclRecord(encodeCanonical(r)), JSON.stringify(r)).toThrow(InvalidAclRecord)
  })
})

describe('ACL sharing: convergence', () => {
  it('replicas receiving the same sharing records in different orders compute the same state', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    await owner.addMember(idFor(ADMIN), 'admin')
    const admin = await member(owner, ADMIN)
    const obj = await owner.createObject()
    const i1 = await owner.createInvite('reader')
    const i2 = await admin.createInvite('writer')
    await pushAll(admin, owner)
    const joins = [await join(i1.token, JOINER, { name: 'J' }), await join(i2.token, OTHER)]
    await owner.ingestJoin(joins[0].raw, idFor(JOINER))
    await admin.ingestJoin(joins[1].raw, idFor(OTHER))
    await owner.acceptJoin(joins[0].id)
    await admin.declineJoin(joins[1].id)
    await pushAll(owner, admin)
    await admin.revokeInvites([i1.recordId])
    await owner.setProfile({ name: 'O' })
    await set(owner, obj, 'k', 1)
    const all = [...(await owner.allChanges()), ...(await admin.allChanges())]
    const unique = [...new Map(all.map((c) => [c.id, c])).values()]
    const digests = new Set<string>()
    const states = new Set<string>()
    for (let seed = 1; seed <= 4; seed++) {
      const r = await SpaceReplica.open(await deps(10 + seed), owner.spaceId, keyFor(OWNER))
      // Any order, in single-change batches: parked changes wait for what they need.
      const order = shuffle(unique, seed)
      for (const c of order) await r.ingest([{ id: c.id, raw: c.raw }])
      digests.add(await r.stateDigest())
      const st = r.acl.current()
      states.add(JSON.stringify({ inv: st.invites(), req: st.requests(), roles: [...st.roles].sort(), heads: r.acl.headIds() }))
    }
    expect(digests.size).toBe(1)
    expect(states.size).toBe(1)
    const st = JSON.parse([...states][0])
    expect(st.req.map((q: { status: string }) => q.status)).toEqual(['accepted', 'declined'])
  })
})

function shuffle<T>(xs: T[], seed: number): T[] {
  const out = [...xs]
  let s = seed * 2654435761
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) >>> 0
    const j = s % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}
