import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { runBlockStoreConformance } from '../../sync/storage/block-conformance.ts'
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
