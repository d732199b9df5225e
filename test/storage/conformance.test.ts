import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { runStorageAdapterConformance } from '../../sync/storage/conformance.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { IndexedDbStorageAdapter } from '../../sync/storage/indexeddb.ts'
import { SqliteStorageAdapter } from '../../node/storage/sqlite.ts'

runStorageAdapterConformance('memory', async () => ({ adapter: new MemoryStorageAdapter() }), { persistent: false })

const idbFactory = new IDBFactory()
let dbCount = 0
runStorageAdapterConformance('indexeddb', async () => {
  const dbName = `svc-conformance-${dbCount++}`
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

for (const layout of ['split', 'inline'] as const) {
  runStorageAdapterConformance(layout === 'split' ? 'sqlite' : 'sqlite (inline layout)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-sqlite-'))
    const path = join(dir, 'store.db')
    return {
      adapter: new SqliteStorageAdapter(path, { layout }),
      reopen: async () => new SqliteStorageAdapter(path),
      teardown: () => rm(dir, { recursive: true, force: true }),
    }
  })
}

describe('SqliteStorageAdapter layouts', () => {
  it('a database keeps the layout it was made with; a new one is split', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-sqlite-layout-'))
    try {
      const value = new Uint8Array([1, 2, 3])
      for (const made of ['inline', 'split'] as const) {
        const path = join(dir, `${made}.db`)
        const a = new SqliteStorageAdapter(path, { layout: made })
        await a.commit({ puts: [{ store: 's', key: 'k', value }], dels: [] })
        await a.close()
        // Reopened without a preference, and with the other one: the file decides.
        for (const asked of [undefined, made === 'inline' ? ('split' as const) : ('inline' as const)]) {
          const b = new SqliteStorageAdapter(path, asked ? { layout: asked } : {})
          expect(b.layout).toBe(made)
          expect(await b.get('s', 'k')).toEqual(value)
          await b.close()
        }
      }
      const fresh = new SqliteStorageAdapter(join(dir, 'fresh.db'))
      expect(fresh.layout).toBe('split')
      await fresh.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('rewrites a value in place and frees the value of a deleted key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-sqlite-layout-'))
    try {
      const a = new SqliteStorageAdapter(join(dir, 'x.db'), { layout: 'split' })
      const count = (t: string) => (a.db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n
      await a.commit({
        puts: [
          { store: 's', key: 'a', value: new Uint8Array([1]) },
          { store: 's', key: 'b', value: new Uint8Array([2]) },
        ],
        dels: [],
      })
      await a.commit({ puts: [{ store: 's', key: 'a', value: new Uint8Array([3]) }], dels: [{ store: 's', key: 'b' }] })
      expect(await a.scan('s')).toEqual([['a', new Uint8Array([3])]])
      expect([count('kv_keys'), count('kv_values')]).toEqual([1, 1])
      await a.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('SqliteStorageAdapter durability', () => {
  it('keeps every acknowledged commit when the process is killed with SIGKILL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-sqlite-kill-'))
    try {
      const path = join(dir, 'store.db')
      const adapterUrl = pathToFileURL(fileURLToPath(new URL('../../node/storage/sqlite.ts', import.meta.url))).href
      const child = join(dir, 'writer.mts')
      // Commits batches forever, acknowledging each one on stdout once commit() resolved.
      await writeFile(
        child,
        `import { SqliteStorageAdapter } from ${JSON.stringify(adapterUrl)}
const a = new SqliteStorageAdapter(${JSON.stringify(path)})
for (let i = 0; ; i++) {
  const puts = Array.from({ length: 50 }, (_, j) => ({ store: 'r', key: \`b\${String(i).padStart(6, '0')}/\${j}\`, value: new Uint8Array(100).fill(i & 255) }))
  await a.commit({ puts, dels: i > 0 ? [{ store: 'r', key: \`b\${String(i - 1).padStart(6, '0')}/0\` }] : [] })
  process.stdout.write(\`ack \${i}\\n\`)
}
`,
      )
      const proc = spawn(process.execPath, ['--import', 'tsx', child], {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let acked = -1
      let stderr = ''
      proc.stderr.on('data', (d) => (stderr += d))
      await new Promise<void>((resolve, reject) => {
        let buf = ''
        proc.stdout.on('data', (d) => {
          buf += d
          const m = [...buf.matchAll(/ack (\d+)\n/g)]
          if (m.length > 0) acked = Number(m[m.length - 1][1])
          if (acked >= 200) {
            proc.kill('SIGKILL')
            resolve()
          }
        })
        proc.on('exit', () => (acked >= 200 ? resolve() : reject(new Error(`writer exited early: ${stderr}`))))
      })
      await new Promise((resolve) => (proc.exitCode !== null || proc.signalCode !== null ? resolve(null) : proc.on('exit', resolve)))

      const a = new SqliteStorageAdapter(path)
      try {
        for (const i of [0, 1, Math.floor(acked / 2), acked]) {
          const b = `b${String(i).padStart(6, '0')}`
          const keys = (await a.scan('r', { prefix: `${b}/` })).map(([k]) => k)
          // Batch i + 1 deleted key 0 of batch i in the same transaction as its puts; the batch
          // after the last acknowledged one may or may not have committed before the kill.
          if (i < acked) expect(keys.length, b).toBe(49)
          else expect([49, 50], b).toContain(keys.length)
          expect(await a.get('r', `${b}/49`), b).toEqual(new Uint8Array(100).fill(i & 255))
        }
        const batches = new Set((await a.scan('r')).map(([k]) => k.slice(0, 7)))
        expect(batches.size).toBeGreaterThanOrEqual(acked + 1)
      } finally {
        await a.close()
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
