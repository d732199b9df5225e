import { describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { SqliteStorageAdapter } from '../../node/storage/sqlite.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import type { ScanOptions, StorageAdapter, WriteBatch } from '../../sync/storage/adapter.ts'
import { deps, keyFor } from '../helpers.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

/** Counts the entries each store hands out, to show what opening a replica reads. */
class CountingStorage implements StorageAdapter {
  readonly name = 'counting'
  reads = new Map<string, number>()
  constructor(private readonly inner: StorageAdapter) {}
  private count(store: string, n: number) {
    this.reads.set(store, (this.reads.get(store) ?? 0) + n)
  }
  async get(store: string, key: string) {
    const v = await this.inner.get(store, key)
    this.count(store, v ? 1 : 0)
    return v
  }
  async getMany(store: string, keys: readonly string[]) {
    const v = await this.inner.getMany(store, keys)
    this.count(store, v.filter(Boolean).length)
    return v
  }
  async scan(store: string, o?: ScanOptions) {
    const v = await this.inner.scan(store, o)
    this.count(store, v.length)
    return v
  }
  commit(b: WriteBatch) {
    return this.inner.commit(b)
  }
  close() {
    return this.inner.close()
  }
}

describe('materialized state is persisted', () => {
  it('reopening from SQLite restores records without replaying history, whatever its length', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-persist-'))
    try {
      const readsFor = async (changes: number) => {
        const path = join(dir, `h${changes}.db`)
        const w = await SpaceReplica.create(await deps(1, new SqliteStorageAdapter(path)), keyFor(1))
        const obj = await w.createObject()
        for (let i = 0; i < changes; i++) await modifyRecords(w, obj, 'd', [{ id: `r${i % 3}`, ops: [{ type: '$set', path: 'n', value: i }] }])
        const digest = await w.stateDigest()
        const counting = new CountingStorage(new SqliteStorageAdapter(path))
        const r = await SpaceReplica.open(await deps(2, counting), w.spaceId, keyFor(1))
        expect((await r.getRecord(obj, 'd', 'r0'))?.value).toEqual({ n: changes - 1 - ((changes - 1) % 3) })
        const changeReads = counting.reads.get('changes') ?? 0
        expect(await r.stateDigest()).toBe(digest)
        await counting.close()
        return changeReads
      }
      // Only the ACL chain is read at open: the object's history is never replayed.
      const short = await readsFor(6)
      const long = await readsFor(300)
      expect(long).toBe(short)
      expect(short).toBe(1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a write is committed with its effect: reopening after each write sees both', async () => {
    const storage = new MemoryStorageAdapter()
    const w = await SpaceReplica.create(await deps(1, storage), keyFor(1))
    const obj = await w.createObject()
    const res = await modifyRecords(w, obj, 'd', [{ id: 'a', ops: [{ type: '$set', path: 'x', value: 1 }] }])
    const r = await SpaceReplica.open(await deps(1, storage), w.spaceId, keyFor(1))
    expect(r.heads(obj)).toEqual([res.changeId])
    expect((await r.getRecord(obj, 'd', 'a'))?.value).toEqual({ x: 1 })
    expect((await r.getRecord(obj, 'd', 'a'))?.verId).toMatch(/^\d{12}-/)
  })
})
