import { describe, expect, it } from 'vitest'
import { derivedObjectId, SpaceReplica } from '../../sync/replica/space-replica.ts'
import { decodeChange } from '../../sync/dag/change.ts'
import { open } from '../../sync/crypto/box.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

describe('read-key rotation on removal', () => {
  it('the removed member decrypts nothing written after removal; remaining members decrypt all history', async () => {
    const owner = await SpaceReplica.create(await deps(1), keyFor(1))
    await owner.addMember(idFor(2), 'writer')
    await owner.addMember(idFor(3), 'writer')
    const obj = await owner.createObject()
    for (let i = 0; i < 5; i++) await modifyRecords(owner, obj, 'd', [{ id: `before${i}`, ops: [{ type: '$set', path: 'v', value: i }] }])
    const removed = await SpaceReplica.open(await deps(3), owner.spaceId, keyFor(3))
    expect((await pushAll(owner, removed)).rejected).toEqual([])
    const keysBefore = new Set(owner.acl.current().keys.keys())

    await owner.removeMember(idFor(3))
    await owner.rotateReadKey() // a second rotation: history must stay reachable through the chain
    for (let i = 0; i < 5; i++) await modifyRecords(owner, obj, 'd', [{ id: `after${i}`, ops: [{ type: '$set', path: 'v', value: i }] }])

    // The removed member receives every byte anyway (a leak elsewhere, say) and still reads nothing new.
    const rep = await pushAll(owner, removed)
    // The first post-removal change is refused; the rest wait on it forever.
    expect(rep.rejected.map((r) => r.reason)).toEqual(['no_read_key'])
    const newKeys = [...owner.acl.current().keys.keys()].filter((k) => !keysBefore.has(k))
    expect(newKeys.length).toBe(2)
    for (const k of newKeys) expect(removed.keyring.get(k)).toBeUndefined()
    // No key it can reach opens any change sealed after the removal.
    const reachable = [...owner.acl.current().keys.keys()].map((k) => removed.keyring.get(k)).filter((k): k is Uint8Array => !!k)
    const after = (await owner.allChanges()).map((c) => decodeChange(c.raw)).filter((c) => newKeys.includes(c.readKeyId))
    expect(after.length).toBe(5)
    for (const c of after) for (const k of reachable) expect(() => open(k, c.payload)).toThrow()
    for (let i = 0; i < 5; i++) expect(await removed.getRecord(obj, 'd', `after${i}`)).toBeUndefined()

    // A remaining member, starting from nothing, reads the whole history through the key chain.
    const stays = await SpaceReplica.open(await deps(2), owner.spaceId, keyFor(2))
    expect((await pushAll(owner, stays)).rejected).toEqual([])
    for (let i = 0; i < 5; i++) {
      expect((await stays.getRecord(obj, 'd', `before${i}`))?.value).toEqual({ v: i })
      expect((await stays.getRecord(obj, 'd', `after${i}`))?.value).toEqual({ v: i })
    }
    expect(await stays.stateDigest()).toBe(await owner.stateDigest())
    // A member added after the rotations reads history written under every older key too.
    await owner.addMember(idFor(4), 'reader')
    const late = await SpaceReplica.open(await deps(4), owner.spaceId, keyFor(4))
    expect((await pushAll(owner, late)).rejected).toEqual([])
    expect((await late.getRecord(obj, 'd', 'before0'))?.value).toEqual({ v: 0 })
  })
})

describe('derived ids', () => {
  it('two independent replicas of one account derive the same space and object ids', async () => {
    const a = await SpaceReplica.create(await deps(1), keyFor(1), { seed: 'svc/space/tech/v1' })
    const b = await SpaceReplica.create(await deps(99), keyFor(1), { seed: 'svc/space/tech/v1' })
    expect(a.spaceId).toBe(b.spaceId)
    const oa = await a.createObject({ seed: 'system:profile' })
    const ob = await b.createObject({ seed: 'system:profile' })
    expect(oa).toBe(ob)
    // Different seeds or accounts give different ids.
    expect(derivedObjectId(a.spaceId, 'system:other')).not.toBe(oa)
    const c = await SpaceReplica.create(await deps(1), keyFor(2), { seed: 'svc/space/tech/v1' })
    expect(c.spaceId).not.toBe(a.spaceId)
    // The two devices' concurrent first keys merge; both read each other's writes.
    await modifyRecords(a, oa, 'p', [{ id: 'me', ops: [{ type: '$set', path: 'name', value: 'A' }] }])
    await modifyRecords(b, ob, 'p', [{ id: 'me', ops: [{ type: '$set', path: 'bio', value: 'B' }] }])
    await pushAll(a, b)
    await pushAll(b, a)
    expect((await a.getRecord(oa, 'p', 'me'))?.value).toEqual({ name: 'A', bio: 'B' })
    expect(await a.stateDigest()).toBe(await b.stateDigest())
    // The ACL now has two concurrent heads (each device's first key); writing on top of the
    // merged tree cites one of them and is accepted everywhere.
    expect(a.acl.headIds()).toHaveLength(2)
    await modifyRecords(a, oa, 'p', [{ id: 'me', ops: [{ type: '$set', path: 'name', value: 'A2' }] }])
    await modifyRecords(b, ob, 'p', [{ id: 'me', ops: [{ type: '$set', path: 'bio', value: 'B2' }] }])
    expect((await pushAll(a, b)).rejected).toEqual([])
    expect((await pushAll(b, a)).rejected).toEqual([])
    expect((await b.getRecord(ob, 'p', 'me'))?.value).toEqual({ name: 'A2', bio: 'B2' })
    expect(await a.stateDigest()).toBe(await b.stateDigest())
  })
})
