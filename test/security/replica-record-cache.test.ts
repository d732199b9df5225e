import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { deps, keyFor, pushAll } from '../helpers.ts'

const MAX = 40
const small = { maxCachedRecords: MAX }

describe('the records cache grows without bound', () => {
  it('stays within its bound, and reads and merges stay correct after eviction, for trees created since open too', async () => {
    const storage = new MemoryStorageAdapter()
    const r = await SpaceReplica.create({ ...(await deps(1, storage)), limits: small }, keyFor(1))
    // Trees created since open: their records start out all cached (misses mean absent).
    const objs = [await r.createObject(), await r.createObject(), await r.createObject()]
    for (let i = 0; i < 300; i++) {
      await r.write(objs[i % 3], [{ op: 'set', ds: 'd', id: `r${i % 150}`, path: `f${Math.floor(i / 150)}`, value: i }])
      expect(r.memory().cachedRecords).toBeLessThanOrEqual(MAX)
    }
    expect(r.memory().recordEvictions).toBeGreaterThan(0)
    // Every record has both fields: the second write to each merged with the first, which had
    // been evicted by then, so it was read back from storage rather than taken as absent.
    for (let i = 0; i < 150; i++) {
      expect((await r.getRecord(objs[i % 3], 'd', `r${i}`))?.value).toEqual({ f0: i, f1: i + 150 })
    }
    // The same history applied by a replica with an unbounded cache gives the same state.
    const ref = await SpaceReplica.open(await deps(2), r.spaceId, keyFor(1))
    await pushAll(r, ref)
    expect(await r.stateDigest()).toBe(await ref.stateDigest())
    // And a bounded replica receiving it as a backlog from a peer agrees as well.
    const backlog = await SpaceReplica.open({ ...(await deps(3)), limits: small }, r.spaceId, keyFor(1))
    const all = await r.allChanges()
    for (let i = 0; i < all.length; i += 25) await backlog.ingest(all.slice(i, i + 25))
    expect(backlog.memory().cachedRecords).toBeLessThanOrEqual(MAX)
    expect(await backlog.stateDigest()).toBe(await ref.stateDigest())
  })

  it('a delete of an object whose records were evicted removes them all', async () => {
    const r = await SpaceReplica.create({ ...(await deps(4)), limits: small }, keyFor(1))
    const obj = await r.createObject()
    for (let i = 0; i < 100; i++) await r.write(obj, [{ op: 'set', ds: 'd', id: `r${i}`, path: 'v', value: i }])
    await r.write(obj, [{ op: 'deleteObject' }])
    expect(await r.listRecords(obj, 'd')).toEqual([])
    expect(await r.getRecord(obj, 'd', 'r0')).toBeUndefined()
  })
})
