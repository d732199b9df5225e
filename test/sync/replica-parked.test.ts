import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'

const set = (value: number) => [{ op: 'set' as const, ds: 'd', id: 'r', path: 'v', value }]

describe('parked changes', () => {
  it('a change woken by one dependency that still lacks another parks again, charged to its own sender', async () => {
    const owner = await SpaceReplica.create(await deps(1), keyFor(1))
    const obj = await owner.createObject()
    const r = await SpaceReplica.open(await deps(2), owner.spaceId, keyFor(1))
    await pushAll(owner, r)
    // A new ACL record, then two writes citing it: the second needs both the record and the first.
    await owner.addMember(idFor(2), 'writer')
    const first = await owner.write(obj, set(1))
    const second = await owner.write(obj, set(2))
    const raw = async (tree: string, id: string) => (await owner.rawChanges(tree, [id]))[0]
    expect((await r.ingest([await raw(obj, second.changeId)], { origin: 'bob' })).missing.length).toBe(2)
    const bobBytes = r.parkedBytesFrom('bob')
    expect(bobBytes).toBeGreaterThan(0)
    // The ACL record comes from someone else: the parked write wakes, still lacks its parent.
    const aclHead = owner.acl.headIds()[0]
    await r.ingest([await raw(owner.spaceId, aclHead)], { origin: 'alice' })
    expect(r.memory().parkedChanges).toBe(1)
    expect(r.parkedBytesFrom('alice')).toBe(0)
    expect(r.parkedBytesFrom('bob')).toBeGreaterThan(0)
    const rep = await r.ingest([await raw(obj, first.changeId)], { origin: 'carol' })
    expect(rep.accepted.sort()).toEqual([first.changeId, second.changeId].sort())
    expect(r.memory().parkedChanges).toBe(0)
  })

  it('a local write that wakes a parked change which still cannot apply leaves it parked', async () => {
    const owner = await SpaceReplica.create(await deps(3), keyFor(1))
    const r = await SpaceReplica.open(await deps(4), owner.spaceId, keyFor(1))
    await pushAll(owner, r)
    // The owner's first write on a derived object cites an ACL record r does not have yet.
    await owner.addMember(idFor(2), 'reader')
    const obj = await owner.createObject({ seed: 'shared' })
    const w = await owner.write(obj, set(1))
    const [change] = await owner.rawChanges(obj, [w.changeId])
    expect((await r.ingest([change], { origin: 'owner' })).missing.length).toBe(2)
    // Local code creates the derived object: the parked write wakes, and still lacks the record.
    expect(await r.createObject({ seed: 'shared' })).toBe(obj)
    expect(r.memory().parkedChanges).toBe(1)
    expect(r.parkedBytesFrom('owner')).toBeGreaterThan(0)
    const rep = await r.ingest([(await owner.rawChanges(owner.spaceId, owner.acl.headIds()))[0]], { origin: 'owner' })
    expect(rep.accepted).toContain(w.changeId)
    expect((await r.getRecord(obj, 'd', 'r'))?.value).toEqual({ v: 1 })
  })
})
