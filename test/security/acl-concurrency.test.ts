import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { Keyring } from '../../sync/acl/keyring.ts'
import { encodeAclRecord, type AclRecord } from '../../sync/acl/records.ts'
import { decodeChange, signChange, type Change } from '../../sync/dag/change.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { seal } from '../../sync/crypto/box.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { publicKeyOf, type KeyPair } from '../../sync/crypto/keys.ts'
import { wrapKeyTo } from '../../sync/crypto/wrap.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

// Accounts: 1 owner, 2 and 3 admins (2 granted first: the senior), 4 writer, 5 reader, 6 and 7 outsiders.
const OWNER = 1,
  A = 2,
  B = 3,
  W = 4,
  M = 5,
  X = 6,
  Y = 7

const items = (cs: Change[]) => cs.map((c) => ({ id: c.id, raw: c.raw }))

async function space() {
  const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
  await owner.addMember(idFor(A), 'admin')
  await owner.addMember(idFor(B), 'admin')
  await owner.addMember(idFor(W), 'writer')
  await owner.addMember(idFor(M), 'reader')
  const obj = await owner.createObject()
  await modifyRecords(owner, obj, 'd', [{ id: 'x', ops: [{ type: '$set', path: 'v', value: 1 }] }])
  const replicaOf = async (n: number) => {
    const r = await SpaceReplica.open(await deps(n), owner.spaceId, keyFor(n))
    expect((await pushAll(owner, r)).rejected).toEqual([])
    return r
  }
  return { owner, obj, replicaOf }
}

/** Signs an ACL record as any client could, on the given parents. */
async function aclRecord(r: SpaceReplica, key: KeyPair, prevIds: string[], record: AclRecord, o: { lamport?: number; timestamp?: number } = {}) {
  const lamport = o.lamport ?? Math.max(...prevIds.map((p) => r.acl.entries.get(p)!.lamport)) + 1
  return signChange(await defaultCryptoProvider(), key, {
    spaceId: r.spaceId,
    treeId: r.spaceId,
    prevIds,
    aclHeadId: '',
    seq: 1,
    lamport,
    timestamp: o.timestamp ?? 1,
    readKeyId: '',
    payload: encodeAclRecord(record),
  })
}

/** Signs an object change as any client could, sealed under the key current in `r`'s view. */
async function objectChange(r: SpaceReplica, key: KeyPair, treeId: string, prevIds: string[], lamport: number, o: { timestamp?: number; id?: string } = {}) {
  const readKeyId = r.acl.current().readKeyId!
  const payload = seal(seededEnv(9), r.keyring.get(readKeyId)!, encodeCanonical({ ops: [{ op: 'set', ds: 'd', id: o.id ?? 'x', path: 'v', value: 666 }] }))
  return signChange(await defaultCryptoProvider(), key, {
    spaceId: r.spaceId,
    treeId,
    prevIds,
    aclHeadId: r.acl.headIds()[0],
    seq: 1,
    lamport,
    timestamp: o.timestamp ?? 1,
    readKeyId,
    payload,
  })
}

/** The read key a change was sealed under, and whether identity `n` can reach it through `acl`. */
async function reachable(r: SpaceReplica, changeId: string, n: number) {
  const raw = (await r.allChanges()).find((c) => c.id === changeId)!.raw
  const keyId = decodeChange(raw).readKeyId
  return new Keyring(r.acl, keyFor(n)).get(keyId) !== undefined
}

describe('A removed member can still read new data', () => {
  it('owner removes M while an admin concurrently changes a role: new writes are sealed under a key M cannot reach', async () => {
    const { owner, obj, replicaOf } = await space()
    const admin = await replicaOf(B)
    // Concurrently: the owner removes M; admin B changes W's role twice (its branch orders later).
    await owner.removeMember(idFor(M))
    await admin.setRole(idFor(W), 'reader')
    await admin.setRole(idFor(W), 'writer')
    expect((await pushAll(admin, owner)).rejected).toEqual([])
    expect((await pushAll(owner, admin)).rejected).toEqual([])
    expect(owner.acl.current().roleOf(idFor(M))).toBe('none')
    // Both sides write after merging; M holds every byte of the full ACL and its own key.
    const a = await modifyRecords(owner, obj, 'd', [{ id: 'after', ops: [{ type: '$set', path: 'v', value: 'secret' }] }])
    const b = await modifyRecords(admin, obj, 'd', [{ id: 'after2', ops: [{ type: '$set', path: 'v', value: 'secret' }] }])
    expect(await reachable(owner, a.changeId, M)).toBe(false)
    expect(await reachable(admin, b.changeId, M)).toBe(false)
    // Each side accepts the other's write.
    expect((await pushAll(admin, owner)).rejected).toEqual([])
    expect((await pushAll(owner, admin)).rejected).toEqual([])
    expect(await owner.stateDigest()).toBe(await admin.stateDigest())
  })
})

describe('A removed admin can undo their removal', () => {
  it("a backdated record with the removal's lamport and an id ground below it is void", async () => {
    const { owner, replicaOf } = await space()
    const removed = await replicaOf(B)
    const preRemoval = removed.acl.headIds()
    const removalId = await owner.removeMember(idFor(B))
    const removal = owner.acl.entries.get(removalId)!
    // B, removed, adds a confederate on the pre-removal heads, backdated and ground below the removal.
    const st = removed.acl.current()
    const rk = removed.keyring.get(st.readKeyId!)!
    let forged: Change | undefined
    for (let t = 1; !forged || forged.id >= removalId; t++) {
      forged = await aclRecord(
        removed,
        keyFor(B),
        preRemoval,
        { type: 'add', identity: idFor(X), role: 'writer', keyId: st.readKeyId!, key: wrapKeyTo(seededEnv(t), publicKeyOf(idFor(X)), rk) },
        { lamport: removal.lamport, timestamp: t },
      )
    }
    await owner.ingest(items([forged]))
    expect(owner.acl.current().roleOf(idFor(X))).toBe('none')
    expect(owner.acl.current().roleOf(idFor(B))).toBe('none')
    // The confederate writes citing the forged record: nothing it writes takes effect.
    const obj = owner.treeIds()[0]
    const idx = await owner.treeIndex(obj)
    const heads = owner.heads(obj)
    const c = await signChange(await defaultCryptoProvider(), keyFor(X), {
      spaceId: owner.spaceId,
      treeId: obj,
      prevIds: heads,
      aclHeadId: forged.id,
      seq: 1,
      lamport: Math.max(...heads.map((h) => idx.get(h)!.lamport)) + 1,
      timestamp: 1,
      readKeyId: st.readKeyId!,
      payload: seal(seededEnv(3), rk, encodeCanonical({ ops: [{ op: 'set', ds: 'd', id: 'x', path: 'v', value: 'pwned' }] })),
    })
    await owner.ingest(items([c]))
    expect((await owner.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 1 })
  })

  it('a huge-lamport record by the removed admin is never cited, and new writes do not fall back to the old key', async () => {
    const { owner, obj, replicaOf } = await space()
    const removed = await replicaOf(B)
    const preRemoval = removed.acl.headIds()
    await owner.removeMember(idFor(B))
    const huge = await aclRecord(removed, keyFor(B), preRemoval, { type: 'role', identity: idFor(M), role: 'writer' }, { lamport: 2 ** 40 })
    await owner.ingest(items([huge]))
    expect(owner.acl.current().roleOf(idFor(M))).toBe('reader')
    const w = await modifyRecords(owner, obj, 'd', [{ id: 'after', ops: [{ type: '$set', path: 'v', value: 'secret' }] }])
    const raw = (await owner.allChanges()).find((c) => c.id === w.changeId)!.raw
    expect(decodeChange(raw).aclHeadId).not.toBe(huge.id)
    expect(await reachable(owner, w.changeId, B)).toBe(false)
  })
})

describe('A removed admin keeps writing under its own rotation, concurrent with its removal', () => {
  it('members that saw the removal first hold its write as void, like members that applied it first: the same heads and state', async () => {
    const { owner, obj, replicaOf } = await space()
    const admin = await replicaOf(B)
    const early = await replicaOf(W)
    // Concurrently: B rotates the key and writes under it; the owner removes B.
    const rotation = await admin.rotateReadKey()
    const w = await modifyRecords(admin, obj, 'd', [{ id: 'x', ops: [{ type: '$set', path: 'v', value: 'by B' }] }])
    await owner.removeMember(idFor(B))
    // W applies B's write before it learns of the removal, then undoes it.
    expect((await pushAll(admin, early)).rejected).toEqual([])
    expect((await early.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 'by B' })
    expect((await pushAll(owner, early)).rejected).toEqual([])
    // The owner learns of the write after its removal voided B's rotation: it cannot (and need
    // not) reach that key, and the write joins its DAG as void all the same.
    const rep = await pushAll(admin, owner)
    expect(owner.acl.current().isVoid(rotation)).toBe(true)
    expect(rep.rejected).toEqual([])
    expect(rep.voided).toEqual([w.changeId])
    expect(owner.heads(obj)).toEqual(early.heads(obj))
    expect((await owner.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 1 })
    expect(await owner.stateDigest()).toBe(await early.stateDigest())
  })
})

describe('A removed admin hands out a key through a record its removal voids', () => {
  it('a write sealed under that key before its writer learnt of the removal is void on every member, and every member holds it', async () => {
    const { owner, obj, replicaOf } = await space()
    const admin = await replicaOf(B)
    const writer = await replicaOf(W)
    const reader = await replicaOf(M)
    // Concurrently: B removes M (its key is not wrapped to M); the owner removes B.
    await admin.removeMember(idFor(M))
    await owner.removeMember(idFor(B))
    // W sees B's record first and writes under B's key.
    expect((await pushAll(admin, writer)).rejected).toEqual([])
    const w = await modifyRecords(writer, obj, 'd', [{ id: 'w', ops: [{ type: '$set', path: 'v', value: 'by W' }] }])
    for (const [from, to] of [
      [owner, writer],
      [owner, reader],
      [admin, reader],
      [admin, owner],
      [writer, owner],
      [writer, reader],
    ] as const) {
      expect((await pushAll(from, to)).rejected).toEqual([])
    }
    // B's removal of M is void: M reads, yet no valid key links B's, so nobody applies W's write.
    expect(owner.acl.current().roleOf(idFor(M))).toBe('reader')
    for (const r of [owner, writer, reader]) {
      expect((await r.treeIndex(obj)).has(w.changeId)).toBe(true)
      expect(await r.getRecord(obj, 'd', 'w')).toBeUndefined()
      expect(r.heads(obj)).toEqual(owner.heads(obj))
      expect(await r.stateDigest()).toBe(await owner.stateDigest())
    }
  })
})

describe('An admin can grant admin through an `add` record', () => {
  it("an admin's add (or role) granting admin is skipped; the grantee cannot manage", async () => {
    const { owner, replicaOf } = await space()
    const admin = await replicaOf(A)
    const st = admin.acl.current()
    const rk = admin.keyring.get(st.readKeyId!)!
    const grant = await aclRecord(admin, keyFor(A), admin.acl.headIds(), {
      type: 'add',
      identity: idFor(X),
      role: 'admin',
      keyId: st.readKeyId!,
      key: wrapKeyTo(seededEnv(5), publicKeyOf(idFor(X)), rk),
    })
    await admin.ingest(items([grant]))
    const byRole = await aclRecord(admin, keyFor(A), [grant.id], { type: 'role', identity: idFor(W), role: 'admin' })
    await owner.ingest(items([grant, byRole]))
    expect(owner.acl.current().roleOf(idFor(X))).not.toBe('admin')
    expect(owner.acl.current().roleOf(idFor(W))).toBe('writer')
    // The would-be admin adds an accomplice: not applied anywhere.
    const accomplice = await aclRecord(owner, keyFor(X), [byRole.id], {
      type: 'add',
      identity: idFor(Y),
      role: 'writer',
      keyId: st.readKeyId!,
      key: wrapKeyTo(seededEnv(6), publicKeyOf(idFor(Y)), rk),
    })
    await owner.ingest(items([accomplice]))
    expect(owner.acl.current().roleOf(idFor(Y))).toBe('none')
  })
})

describe('Role `none` revokes access without rotating the key', () => {
  it('setting role none removes the member and rotates: it reads nothing written after', async () => {
    const { owner, obj } = await space()
    await owner.setRole(idFor(M), 'none')
    expect(owner.acl.current().roleOf(idFor(M))).toBe('none')
    const w = await modifyRecords(owner, obj, 'd', [{ id: 'after', ops: [{ type: '$set', path: 'v', value: 'secret' }] }])
    expect(await reachable(owner, w.changeId, M)).toBe(false)
  })

  it('a role-none record from a peer is refused as malformed', async () => {
    const { owner } = await space()
    const r = await aclRecord(owner, keyFor(OWNER), owner.acl.headIds(), { type: 'role', identity: idFor(W), role: 'none' })
    const rep = await owner.ingest(items([r]))
    expect(rep.rejected).toEqual([{ id: r.id, reason: 'malformed' }])
    expect(owner.acl.current().roleOf(idFor(W))).toBe('writer')
  })
})

describe('A removed writer keeps writing with a backdated timestamp, and object roots are never voided', () => {
  it('a backdated write on the pre-removal state is void, whatever its timestamp', async () => {
    const { owner, obj, replicaOf } = await space()
    const writer = await replicaOf(W)
    await owner.removeMember(idFor(W))
    const idx = await writer.treeIndex(obj)
    const heads = writer.heads(obj)
    const c = await objectChange(writer, keyFor(W), obj, heads, Math.max(...heads.map((h) => idx.get(h)!.lamport)) + 1, { timestamp: 1 })
    const rep = await owner.ingest(items([c]))
    expect(rep.voided).toEqual([c.id])
    expect((await owner.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 1 })
  })

  it('an object root and its changes by the removed writer never materialize', async () => {
    const { owner, replicaOf } = await space()
    const writer = await replicaOf(W)
    await owner.removeMember(idFor(W))
    const root = await signChange(await defaultCryptoProvider(), keyFor(W), {
      spaceId: owner.spaceId,
      treeId: '',
      prevIds: [],
      aclHeadId: writer.acl.headIds()[0],
      seq: 1,
      lamport: 0,
      timestamp: 1,
      readKeyId: '',
      payload: encodeCanonical({ kind: 'object', nonce: new Uint8Array(16).fill(7) }),
    })
    const c = await objectChange(writer, keyFor(W), root.id, [root.id], 1, { id: 'junk' })
    await owner.ingest(items([root, c]))
    expect(await owner.getRecord(root.id, 'd', 'junk')).toBeUndefined()
    expect(await owner.listRecords(root.id, 'd')).toEqual([])
  })

  it('a write the remover saw stays; one it did not see, applied before the removal arrived, is undone', async () => {
    const { owner, obj, replicaOf } = await space()
    const writer = await replicaOf(W)
    const third = await replicaOf(M)
    const idx = await writer.treeIndex(obj)
    const heads = writer.heads(obj)
    const seen = await objectChange(writer, keyFor(W), obj, heads, Math.max(...heads.map((h) => idx.get(h)!.lamport)) + 1, { id: 'seen' })
    await owner.ingest(items([seen]))
    await owner.removeMember(idFor(W))
    const unseen = await objectChange(writer, keyFor(W), obj, [seen.id], seen.lamport + 1, { id: 'unseen', timestamp: 2 })
    await third.ingest(items([seen, unseen]))
    expect((await third.getRecord(obj, 'd', 'unseen'))?.value).toEqual({ v: 666 })
    await pushAll(owner, third)
    await owner.ingest(items([unseen]))
    expect((await owner.getRecord(obj, 'd', 'seen'))?.value).toEqual({ v: 666 })
    expect(await owner.getRecord(obj, 'd', 'unseen')).toBeUndefined()
    expect(await third.getRecord(obj, 'd', 'unseen')).toBeUndefined()
    expect(await third.stateDigest()).toBe(await owner.stateDigest())
  })
})
