import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { runStorageAdapterConformance } from '../../sync/storage/conformance.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { IndexedDbStorageAdapter } from '../../sync/storage/indexeddb.ts'
import { SqliteStorageAdapter } from '../../node/storage/sqlite.ts'

runStorageAdapterConformance('memory', async () => ({ adapter: new MemoryStorageAdapter() }))

let dbCount = 0
runStorageAdapterConformance('indexeddb', async () => {
  // One factory per test file run, a fresh database name per test.
  const dbName = `svc-conformance-${process.pid}-${dbCount++}`
  const open = () => new IndexedDbStorageAdapter({ dbName, indexedDB: factory, IDBKeyRange })
  return {
    adapter: open(),
    reopen: async () => open(),
    teardown: async () => {
      await new Promise<void>((resolve, reject) => {
        const req = factory.deleteDatabase(dbName)
        req.onsuccess = () => resolve()
        req.onerror = () => reject(req.error)
      })
    },
  }
})
const factory = new IDBFactory()

runStorageAdapterConformance('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-sqlite-'))
  const path = join(dir, 'store.db')
  return {
    adapter: new SqliteStorageAdapter(path),
    reopen: async () => new SqliteStorageAdapter(path),
    teardown: () => rm(dir, { recursive: true, force: true }),
  }
})

runStorageAdapterConformance('sqlite :memory:', async () => ({
  adapter: new SqliteStorageAdapter(':memory:'),
}))
