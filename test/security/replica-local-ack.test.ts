import { describe, expect, it } from 'vitest'
import { SvcError } from '../../sync/core/errors.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { changeKey } from '../../sync/replica/storage-keys.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { deps, keyFor } from '../helpers.ts'
import { TestStorage } from './replica-storage.ts'

const set = (path: string, value: number) => [{ op: 'set' as const, ds: 'd', id: 'r', path, value }]

describe('a local write that gets parked still returns a change id and is never stored', () => {
  it('a local write that cannot be applied throws an SvcError, and nothing of it is kept', async () => {
    const storage = new TestStorage(new MemoryStorageAdapter())
    const d = await deps(1, storage)
    const owner = await SpaceReplica.create(d, keyFor(1))
    const obj = await owner.createObject()
    const head = (await owner.write(obj, set('a', 1))).changeId
    // The tree's head is stored but the index load does not see it (a damaged or lagging
    // store): the next write builds on a parent this replica cannot find.
    storage.hiddenFromScans.add(changeKey(owner.spaceId, obj, head))
    const r = await SpaceReplica.open(d, owner.spaceId, keyFor(1))
    let result: unknown
    let error: unknown
    try {
      result = await r.write(obj, set('b', 2))
    } catch (err) {
      error = err
    }
    expect(result).toBeUndefined()
    expect(error).toBeInstanceOf(SvcError)
    // Not parked either: it will not apply later behind the caller's back.
    expect(r.memory().parkedChanges).toBe(0)
    storage.hiddenFromScans.clear()
    const reopened = await SpaceReplica.open(d, owner.spaceId, keyFor(1))
    expect((await reopened.getRecord(obj, 'd', 'r'))?.value).toEqual({ a: 1 })
  })

  it('a write that commits resolves with a change id stored under it', async () => {
    const d = await deps(3)
    const r = await SpaceReplica.create(d, keyFor(1))
    const obj = await r.createObject()
    const res = await r.write(obj, set('a', 1))
    expect(await d.storage.get('changes', changeKey(r.spaceId, obj, res.changeId))).toBeDefined()
  })
})
