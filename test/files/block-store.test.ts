import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { runBlockStoreConformance, runBlockStoreSuite, type BlockStoreFixture } from '../../sync/storage/block-conformance.ts'
import { KvBlockStore } from '../../sync/storage/block-store.ts'
import { FsBlockStore } from '../../node/storage/fs-block-store.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { IndexedDbStorageAdapter } from '../../sync/storage/indexeddb.ts'
import { SqliteStorageAdapter } from '../../node/storage/sqlite.ts'

runBlockStoreConformance('memory', async () => ({ adapter: new MemoryStorageAdapter() }))

const idbFactory = new IDBFactory()
let dbCount = 0
runBlockStoreConformance('indexeddb', async () => {
  const dbName = `svc-blocks-${dbCount++}`
  const open = () => new IndexedDbStorageAdapter({ dbName, indexedDB: idbFactory, IDBKeyRange })
  return {
    adapter: open(),
    reopen: async () => open(),
    teardown: () =>
      new Promise<void>((resolve, reject) => {
        const req = idbFactory.deleteDatabase(dbName)
        req.onsuccess = () => resolve()
        req.onerror = () => reject(req.error)
      }),
  }
})

runBlockStoreConformance('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-blocks-'))
  const path = join(dir, 'store.db')
  return { adapter: new SqliteStorageAdapter(path), reopen: async () => new SqliteStorageAdapter(path), teardown: () => rm(dir, { recursive: true, force: true }) }
})

// The daemon's store: one file per block, and the same store reading through an older
// SQLite-kept store (blocks stored before the upgrade).
runBlockStoreSuite('files on disk', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-fsblocks-'))
  const open = (): BlockStoreFixture => ({ store: new FsBlockStore(join(dir, 'blocks')), close: async () => {}, reopen: async () => open() })
  return { ...open(), teardown: () => rm(dir, { recursive: true, force: true }) }
})

runBlockStoreSuite('files on disk over a legacy SQLite store', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-fsblocks-'))
  const open = (): BlockStoreFixture => {
    const db = new SqliteStorageAdapter(join(dir, 'store.db'))
    return { store: new FsBlockStore(join(dir, 'blocks'), new KvBlockStore(db)), close: () => db.close(), reopen: async () => open() }
  }
  return { ...open(), teardown: () => rm(dir, { recursive: true, force: true }) }
})

describe('FsBlockStore', () => {
  it('reads, lists, counts and deletes blocks an older daemon kept in SQLite, and writes only files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-fsblocks-'))
    const db = new SqliteStorageAdapter(join(dir, 'store.db'))
    try {
      const legacy = new KvBlockStore(db)
      await legacy.put('s1', [{ id: 'old', bytes: new Uint8Array(40).fill(4) }])
      const store = new FsBlockStore(join(dir, 'blocks'), legacy)
      await store.put('s1', [
        { id: 'new', bytes: new Uint8Array(10).fill(5) },
        { id: 'old', bytes: new Uint8Array(40).fill(4) },
      ])
      expect(await store.get('s1', 'old')).toEqual(new Uint8Array(40).fill(4))
      expect(await store.has('s1', ['old', 'new', 'none'])).toEqual([true, true, false])
      expect(await store.list('s1')).toEqual([
        { id: 'new', size: 10 },
        { id: 'old', size: 40 },
      ])
      expect(await store.size()).toBe(50)
      expect(await legacy.has('s1', ['new'])).toEqual([false])
      expect(await store.delete('s1', ['old'])).toBe(40)
      expect(await legacy.has('s1', ['old'])).toEqual([false])
      expect(await store.size()).toBe(10)
    } finally {
      await db.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('leaves no partial block behind: temporaries of an interrupted put are swept, never listed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-fsblocks-'))
    try {
      const root = join(dir, 'blocks')
      await mkdir(join(root, 's1', 'ab'), { recursive: true })
      await writeFile(join(root, 's1', 'ab', 'abc.tmp-0123'), new Uint8Array(7))
      const store = new FsBlockStore(root)
      expect(await store.list('s1')).toEqual([])
      expect(await store.size()).toBe(0)
      await store.put('s1', [{ id: 'abd', bytes: new Uint8Array(3) }])
      expect(await readdir(join(root, 's1', 'ab'))).toEqual(['abd'])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('refuses ids that could leave its directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-fsblocks-'))
    try {
      const store = new FsBlockStore(join(dir, 'blocks'))
      await expect(store.put('s1', [{ id: '../x', bytes: new Uint8Array(1) }])).rejects.toThrow(/bad block id/)
      await expect(store.get('..', 'x')).rejects.toThrow(/bad space id/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('FsBlockStore file modes', () => {
  it('writes blocks owner-only (0600) in owner-only directories (0700), like the database', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-fsblocks-'))
    try {
      const root = join(dir, 'blocks')
      await new FsBlockStore(root).put('s1', [{ id: 'variant.f1.w64', bytes: new Uint8Array(5) }])
      expect((await stat(join(root, 's1', 'va', 'variant.f1.w64'))).mode & 0o777).toBe(0o600)
      expect((await stat(join(root, 's1', 'va'))).mode & 0o777).toBe(0o700)
      expect((await stat(join(root, 's1'))).mode & 0o777).toBe(0o700)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
