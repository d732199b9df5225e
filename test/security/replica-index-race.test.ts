import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { deps, keyFor } from '../helpers.ts'
import { TestStorage } from './replica-storage.ts'

const set = (path: string, value: number) => [{ op: 'set' as const, ds: 'd', id: 'r', path, value }]

describe('an acknowledged local write is lost when a slow tree-index load overwrites a newer index', () => {
  it('a tree-index load asked for outside the serial queue never replaces the index a write extended', async () => {
    const storage = new TestStorage(new MemoryStorageAdapter())
    const d = await deps(1, storage)
    const owner = await SpaceReplica.create(d, keyFor(1))
    const obj = await owner.createObject()
    await owner.write(obj, set('a', 1))
    // Reopened: the tree's index is not loaded yet.
    const r = await SpaceReplica.open(d, owner.spaceId, keyFor(1))
    // Head sync asks for the index (outside the queue) on a slow storage; a write runs meanwhile.
    storage.nextChangeScanDelay = 60
    const slowLoad = r.treeIndex(obj)
    const w1 = await r.write(obj, set('b', 2))
    await slowLoad
    // The acknowledged write is in the index head sync reads (else it is never offered to peers)...
    expect((await r.treeIndex(obj)).has(w1.changeId)).toBe(true)
    // ...and the next write, built on it, commits and survives a reopen.
    const w2 = await r.write(obj, set('c', 3))
    const reopened = await SpaceReplica.open(await deps(2, storage), owner.spaceId, keyFor(1))
    expect((await reopened.getRecord(obj, 'd', 'r'))?.value).toEqual({ a: 1, b: 2, c: 3 })
    expect((await reopened.treeIndex(obj)).has(w2.changeId)).toBe(true)
  })
})

describe('an acknowledged local write is lost when a slow record read outside the queue overwrites a newer cached record', () => {
  it('a record read that started before a write never replaces the state the write merged', async () => {
    const storage = new TestStorage(new MemoryStorageAdapter())
    const d = await deps(3, storage)
    const owner = await SpaceReplica.create(d, keyFor(1))
    const obj = await owner.createObject()
    await owner.write(obj, set('a', 1))
    const r = await SpaceReplica.open(d, owner.spaceId, keyFor(1))
    // A reader (a route, a live query) reads the record on a slow storage while a write lands.
    storage.nextRecordGetDelay = 60
    const slowRead = r.getRecord(obj, 'd', 'r')
    await r.write(obj, set('b', 2))
    await slowRead
    // The next write merges with what the previous one wrote, not with the stale read.
    await r.write(obj, set('c', 3))
    expect((await r.getRecord(obj, 'd', 'r'))?.value).toEqual({ a: 1, b: 2, c: 3 })
    const reopened = await SpaceReplica.open(await deps(4, storage), owner.spaceId, keyFor(1))
    expect((await reopened.getRecord(obj, 'd', 'r'))?.value).toEqual({ a: 1, b: 2, c: 3 })
  })
})
