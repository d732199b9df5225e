import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

describe('space replica', () => {
  it('writes locally and converges on a second replica of the same space', async () => {
    const a = await SpaceReplica.create(await deps(1), keyFor(1))
    const obj = await a.createObject()
    const res = await modifyRecords(a, obj, 'tasks', [{ id: 't1', ops: [{ type: '$set', path: '', value: { title: 'one', n: 1 } }] }])
    expect(res.recordIds).toEqual(['t1'])
    expect(res.changeId).toMatch(/^[1-9A-HJ-NP-Za-km-z]+$/)
    await modifyRecords(a, obj, 'tasks', [{ id: 't1', ops: [{ type: '$inc', path: 'n', value: 2 }] }])
    expect((await a.getRecord(obj, 'tasks', 't1'))?.value).toEqual({ title: 'one', n: 3 })

    const b = await SpaceReplica.open(await deps(2), a.spaceId, keyFor(1))
    const rep = await pushAll(a, b)
    expect(rep.rejected).toEqual([])
    expect((await b.getRecord(obj, 'tasks', 't1'))?.value).toEqual({ title: 'one', n: 3 })
    expect(await b.stateDigest()).toBe(await a.stateDigest())
  })

  it('concurrent modifies never resolve against the same stale value', async () => {
    const a = await SpaceReplica.create(await deps(1), keyFor(1))
    const obj = await a.createObject()
    const inc = () => modifyRecords(a, obj, 'd', [{ id: 'c', ops: [{ type: '$inc', path: 'n', value: 1 }] }])
    await Promise.all(Array.from({ length: 10 }, inc))
    expect((await a.getRecord(obj, 'd', 'c'))?.value).toEqual({ n: 10 })
  })

  it('reports a record written under the change-derived id by the id it got', async () => {
    const a = await SpaceReplica.create(await deps(1), keyFor(1))
    const obj = await a.createObject()
    const res = await modifyRecords(a, obj, 'notes', [
      { id: '@change', ops: [{ type: '$set', path: 'text', value: 'derived' }] },
      { id: 'plain', ops: [{ type: '$set', path: 'text', value: 'named' }] },
    ])
    expect(res.recordIds).toHaveLength(2)
    expect(res.recordIds[0]).not.toBe('@change')
    expect(res.recordIds[1]).toBe('plain')
    expect((await a.getRecord(obj, 'notes', res.recordIds[0]))?.value).toEqual({ text: 'derived' })
  })

  it('lets a member write and a removed member read nothing after removal', async () => {
    const owner = await SpaceReplica.create(await deps(1), keyFor(1))
    await owner.addMember(idFor(2), 'writer')
    const obj = await owner.createObject()
    const member = await SpaceReplica.open(await deps(2), owner.spaceId, keyFor(2))
    expect((await pushAll(owner, member)).rejected).toEqual([])
    await modifyRecords(member, obj, 'd', [{ id: 'r', ops: [{ type: '$set', path: 'x', value: 1 }] }])
    expect((await pushAll(member, owner)).rejected).toEqual([])
    expect((await owner.getRecord(obj, 'd', 'r'))?.value).toEqual({ x: 1 })
  })

  it('keeps a loaded index of the ACL tree current as records arrive', async () => {
    const owner = await SpaceReplica.create(await deps(1), keyFor(1))
    const idx = await owner.treeIndex(owner.spaceId)
    const before = idx.size
    const id = await owner.addMember(idFor(2), 'reader')
    expect(idx.has(id)).toBe(true)
    expect(idx.size).toBe(before + 1)
  })
})
