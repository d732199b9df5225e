import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { modifyRecords } from '../../sync/space/modify.ts'
import { Keyring } from '../../sync/acl/keyring.ts'
import { decodeChange } from '../../sync/dag/change.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'

// 1 owner, 2 senior admin, 3 junior admin, 4 writer, 5 reader.
const OWNER = 1,
  A = 2,
  B = 3,
  W = 4,
  M = 5

async function team() {
  const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
  await owner.addMember(idFor(A), 'admin')
  await owner.addMember(idFor(B), 'admin')
  await owner.addMember(idFor(W), 'writer')
  await owner.addMember(idFor(M), 'reader')
  const obj = await owner.createObject()
  const open = async (n: number) => {
    const r = await SpaceReplica.open(await deps(n), owner.spaceId, keyFor(n))
    expect((await pushAll(owner, r)).rejected).toEqual([])
    return r
  }
  return { owner, obj, a: await open(A), b: await open(B), open }
}

const set = (r: SpaceReplica, obj: string, id: string, v: unknown) => modifyRecords(r, obj, 'd', [{ id, ops: [{ type: '$set', path: 'v', value: v }] }])

async function syncAll(...rs: SpaceReplica[]) {
  for (let round = 0; round < 2; round++) for (const x of rs) for (const y of rs) if (x !== y) await pushAll(x, y)
}

const keyOf = async (r: SpaceReplica, changeId: string) => decodeChange((await r.allChanges()).find((c) => c.id === changeId)!.raw).readKeyId

describe('ACL under concurrency, across replicas', () => {
  it('a writer facing concurrent ACL heads writes a merge record and cites it', async () => {
    const { owner, obj, a, b } = await team()
    await a.setRole(idFor(W), 'reader')
    await b.setRole(idFor(M), 'writer')
    await pushAll(b, a)
    const before = a.acl.headIds()
    expect(before).toHaveLength(2)
    const w = await set(a, obj, 'x', 1)
    const change = decodeChange((await a.allChanges()).find((c) => c.id === w.changeId)!.raw)
    const cited = a.acl.entries.get(change.aclHeadId)!
    expect(cited.record.type).toBe('merge')
    expect(cited.prevIds).toEqual(before)
    expect(a.acl.headIds()).toEqual([cited.id])
    // The next write needs no new merge.
    const w2 = await set(a, obj, 'x', 2)
    expect(decodeChange((await a.allChanges()).find((c) => c.id === w2.changeId)!.raw).aclHeadId).toBe(cited.id)
    await syncAll(owner, a, b)
    expect((await owner.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 2 })
    expect(await owner.stateDigest()).toBe(await a.stateDigest())
    expect(await b.stateDigest()).toBe(await a.stateDigest())
  })

  it('two admins removing each other: the senior stands on every replica', async () => {
    const { owner, obj, a, b } = await team()
    await a.removeMember(idFor(B))
    await b.removeMember(idFor(A))
    await syncAll(owner, a, b)
    for (const r of [owner, a, b]) {
      expect(r.acl.current().roleOf(idFor(A))).toBe('admin')
      expect(r.acl.current().roleOf(idFor(B))).toBe('none')
    }
    // B's replica knows it is out: it cannot write; the senior's writes are sealed beyond it.
    await expect(set(b, obj, 'x', 'b')).rejects.toMatchObject({ code: 'space.read_only' })
    const w = await set(a, obj, 'x', 'a')
    expect(new Keyring(a.acl, keyFor(B)).get(await keyOf(a, w.changeId))).toBeUndefined()
    await syncAll(owner, a)
    expect(await owner.stateDigest()).toBe(await a.stateDigest())
  })

  it("two removals wrapping their keys to each other's removed member: a manager rotates on merge", async () => {
    const { owner, obj, a, b } = await team()
    await a.removeMember(idFor(M))
    await b.removeMember(idFor(W))
    // The owner takes both: every key is wrapped to someone removed, so it rotates by itself.
    await pushAll(a, owner)
    await pushAll(b, owner)
    const st = owner.acl.current()
    expect(st.roleOf(idFor(M))).toBe('none')
    expect(st.roleOf(idFor(W))).toBe('none')
    expect(st.readKeyId).toBeDefined()
    expect(owner.acl.entries.get(st.readKeyId!)!.record.type).toBe('rotate')
    const w = await set(owner, obj, 'x', 'secret')
    const keyId = await keyOf(owner, w.changeId)
    expect(new Keyring(owner.acl, keyFor(M)).get(keyId)).toBeUndefined()
    expect(new Keyring(owner.acl, keyFor(W)).get(keyId)).toBeUndefined()
    // Members who stay read everything, both branches of history included.
    await syncAll(owner, a, b)
    expect((await a.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 'secret' })
    const late = await SpaceReplica.open(await deps(9), owner.spaceId, keyFor(A))
    expect((await pushAll(owner, late)).rejected).toEqual([])
    expect(await late.stateDigest()).toBe(await owner.stateDigest())
  })

  it('a member added with an older key concurrently with a rotation gets the key through a heal rotation', async () => {
    const { owner, obj, a, b, open } = await team()
    await a.rotateReadKey()
    await b.addMember(idFor(7), 'reader')
    await pushAll(b, a)
    expect(a.acl.current().needsRotation()).toBe(false)
    const w = await set(a, obj, 'x', 'hello')
    await syncAll(owner, a, b)
    const seven = await open(7)
    expect((await seven.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 'hello' })
    expect(new Keyring(a.acl, keyFor(7)).get(await keyOf(a, w.changeId))).toBeDefined()
  })

  it('concurrent rotations leave a key no key links: a manager links it, so a member added on the other branch reads what was sealed under it', async () => {
    const { owner, obj, a, b, open } = await team()
    // A rotates and writes under its key; concurrently the owner adds 7 and rotates (removing M).
    await a.rotateReadKey()
    await set(a, obj, 'x', 'from A')
    await owner.addMember(idFor(7), 'writer')
    await owner.removeMember(idFor(M))
    await syncAll(owner, a, b)
    // The owner's key is the newest and wrapped to every reader, 7 included, but it does not
    // link A's: A, the other head's author, rotates once more to link both.
    expect(owner.acl.current().keyHeads()).toHaveLength(1)
    const seven = await open(7)
    expect((await seven.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 'from A' })
    expect(await seven.stateDigest()).toBe(await owner.stateDigest())
  })

  it('a key linked from a key wrapped to a removed member is not current: nothing new is sealed under it', async () => {
    const { owner, obj, a, open } = await team()
    await owner.addMember(idFor(8), 'writer')
    const eight = await open(8)
    // Concurrently: A rotates (its key wrapped to W); the owner removes W.
    await a.rotateReadKey()
    await owner.removeMember(idFor(W))
    // A adds 7 under its key; the owner, taking that in, rotates (linking its removal's key)
    // and wraps to 7; concurrently A removes 7, wrapping its key to W, whose removal it lacks.
    await a.addMember(idFor(7), 'writer')
    expect((await pushAll(a, owner)).rejected).toEqual([])
    await a.removeMember(idFor(7))
    // Writer 8 (no manager: it cannot rotate) takes in both sides.
    expect((await pushAll(owner, eight)).rejected).toEqual([])
    expect((await pushAll(a, eight)).rejected).toEqual([])
    const st = eight.acl.current()
    expect(st.roleOf(idFor(W))).toBe('none')
    expect(st.roleOf(idFor(7))).toBe('none')
    // Every key is wrapped to W or 7, or linked from one that is: none is current, so 8 writes
    // nothing until a manager rotates, rather than sealing under a key 7 reaches.
    for (const n of [W, 7]) if (st.readKeyId) expect(new Keyring(eight.acl, keyFor(n)).get(st.readKeyId)).toBeUndefined()
    await expect(set(eight, obj, 'x', 'secret')).rejects.toMatchObject({ code: 'space.read_only' })
    await pushAll(eight, a)
    const w = await set(a, obj, 'x', 'after both removals')
    for (const n of [W, 7]) expect(new Keyring(a.acl, keyFor(n)).get(await keyOf(a, w.changeId))).toBeUndefined()
  })

  it('only the owner grants admin; role none is a removal', async () => {
    const { owner, a } = await team()
    await expect(a.addMember(idFor(7), 'admin')).rejects.toMatchObject({ code: 'space.read_only' })
    await expect(a.setRole(idFor(W), 'admin')).rejects.toMatchObject({ code: 'space.read_only' })
    await expect(a.setRole(idFor(B), 'writer')).rejects.toMatchObject({ code: 'space.read_only' })
    const id = await owner.setRole(idFor(M), 'none')
    expect(owner.acl.entries.get(id)!.record.type).toBe('remove')
  })

  it("a removal witnesses the removed writer's latest change in each tree", async () => {
    const { owner, obj, open } = await team()
    const w = await open(W)
    const obj2 = await w.createObject()
    await set(w, obj, 'x', 1)
    const last1 = await set(w, obj, 'x', 2)
    await pushAll(w, owner)
    const id = await owner.removeMember(idFor(W))
    const r = owner.acl.entries.get(id)!.record
    expect(r.type === 'remove' && r.witness).toEqual([last1.changeId, obj2].sort())
    expect((await owner.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 2 })
  })
  it("the owner's rotation on a junior admin's removal that then loses: the senior admin still gets the owner's writes", async () => {
    // Seeds 61, 177 and 187 of the hostile sweep: an admin (here B) removes the senior admin A
    // while A removes B. The owner sees only B's removal, rotates on top of it (its key wrapped to
    // itself and B, not to A) and writes under that key. Once A's removal arrives, B's records are
    // void and the owner's key is tainted, but still the newest: only the owner (and B) can link
    // it into a key A holds. Before the fix the owner left that to A, who cannot reach the key.
    const { owner, obj, a, b } = await team()
    await b.removeMember(idFor(A))
    await a.removeMember(idFor(B))
    await pushAll(b, owner)
    await owner.rotateReadKey()
    const w = await set(owner, obj, 'x', 'owner')
    await pushAll(a, owner)
    expect(owner.acl.current().roleOf(idFor(B))).toBe('none')
    await syncAll(owner, a)
    expect(a.heads(obj)).toEqual(owner.heads(obj))
    expect((await a.rawChanges(obj, [w.changeId])).length).toBe(1)
    expect((await a.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 'owner' })
    expect(await a.stateDigest()).toBe(await owner.stateDigest())
  })
})
