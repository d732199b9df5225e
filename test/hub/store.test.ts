import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryLogger } from '../../sync/core/log.ts'
import { hubStoreConformance } from '../../node/hub/store/conformance.ts'
import type { HubChange } from '../../node/hub/store/hub-store.ts'
import { PgHubStore } from '../../node/hub/store/pg-hub-store.ts'
import { SqliteHubStore } from '../../node/hub/store/sqlite-hub-store.ts'
import { startPg, type PgCluster } from '../fixtures/pg-fixture.ts'

const dir = mkdtempSync(join(tmpdir(), 'svc-hub-store-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const change = (id: string, n = 40): HubChange => ({ id, treeId: 'tree', raw: new Uint8Array(n).fill(id.length) })

async function until(what: string, cond: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`)
    await sleep(10)
  }
}

{
  let n = 0
  let current = ''
  hubStoreConformance('sqlite', async () => new SqliteHubStore((current = join(dir, `hub${++n}.db`))), { reopen: async () => new SqliteHubStore(current) })
}

describe('SqliteHubStore', () => {
  it('keeps every acknowledged append when the process is killed with SIGKILL', async () => {
    const path = join(dir, 'killed.db')
    const storeUrl = pathToFileURL(fileURLToPath(new URL('../../node/hub/store/sqlite-hub-store.ts', import.meta.url))).href
    const child = join(dir, 'writer.mts')
    // Appends batches of 500 changes forever, acknowledging each once appendChanges resolved.
    writeFileSync(
      child,
      `import { SqliteHubStore } from ${JSON.stringify(storeUrl)}
const s = new SqliteHubStore(${JSON.stringify(path)})
for (let i = 0; ; i++) {
  const changes = Array.from({ length: 500 }, (_, j) => ({ id: \`b\${i}-\${j}\`, treeId: 't', raw: new Uint8Array(300).fill(i & 255) }))
  await s.appendChanges('space', changes)
  process.stdout.write(\`ack \${i}\\n\`)
}
`,
    )
    const proc = spawn(process.execPath, ['--import', 'tsx', child], { cwd: fileURLToPath(new URL('../..', import.meta.url)), stdio: ['ignore', 'pipe', 'pipe'] })
    let acked = -1
    let stderr = ''
    proc.stderr.on('data', (d) => (stderr += d))
    await new Promise<void>((resolve, reject) => {
      let out = ''
      proc.stdout.on('data', (d) => {
        out += d
        const m = [...out.matchAll(/ack (\d+)\n/g)]
        if (m.length > 0) acked = Number(m[m.length - 1][1])
        if (acked >= 40) {
          proc.kill('SIGKILL')
          resolve()
        }
      })
      proc.on('exit', () => (acked >= 40 ? resolve() : reject(new Error(`writer exited early: ${stderr}`))))
    })
    await new Promise((resolve) => (proc.exitCode !== null || proc.signalCode !== null ? resolve(null) : proc.on('exit', resolve)))

    const s = new SqliteHubStore(path)
    try {
      const { changes } = await s.spaceStats('space')
      // The batch after the last acknowledged one may or may not have committed before the kill.
      expect([(acked + 1) * 500, (acked + 2) * 500]).toContain(changes)
      const all = await s.changesSince('space', 0, 1_000_000)
      expect(all.length).toBe(changes)
      expect(all.find((c) => c.id === `b${acked}-499`)?.raw).toEqual(new Uint8Array(300).fill(acked & 255))
    } finally {
      await s.close()
    }
  })

  it('creates its file readable by its owner only, and refuses a file of a later schema', async () => {
    const path = join(dir, 'mode.db')
    await new SqliteHubStore(path).close()
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const db = new Database(path)
    db.exec('UPDATE hub_schema SET version = 99')
    db.close()
    expect(() => new SqliteHubStore(path)).toThrow(/schema version 99/)
  })
})

let cluster: PgCluster | undefined
beforeAll(() => {
  cluster = startPg()
}, 120_000)
afterAll(() => cluster?.stop())

let dbCount = 0
/** A database per test: the tests share the cluster, never rows. */
async function freshDb(): Promise<string> {
  const name = `hub_${++dbCount}`
  const admin = new pg.Client({ connectionString: cluster!.url })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  return cluster!.url.replace('/postgres?', `/${name}?`)
}

{
  let current = ''
  hubStoreConformance('postgres', async () => PgHubStore.open((current = await freshDb())), { reopen: () => PgHubStore.open(current) })
}

describe('PgHubStore: several hub processes on one database', () => {
  const S = '8Lfjp9NzrnB4cL1d7i3m6fKcAXydk3mSHoQzJ5WFm1dN'

  it('two processes opening a new database at once both get the schema', async () => {
    const url = await freshDb()
    const [a, b] = await Promise.all([PgHubStore.open(url), PgHubStore.open(url)])
    try {
      expect(await a.appendChanges(S, [change('x')])).toBe(1)
      expect((await b.changesSince(S, 0, 10)).map((c) => c.id)).toEqual(['x'])
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  it("an append through one is heard by the other's onAppend within 1 s, not as local, and the other reads it", async () => {
    const url = await freshDb()
    const a = await PgHubStore.open(url)
    const b = await PgHubStore.open(url)
    try {
      const heardA: Array<[string, number, boolean]> = []
      const heardB: Array<[string, number, boolean, number]> = []
      a.onAppend((s, q, local) => heardA.push([s, q, local]))
      b.onAppend((s, q, local) => heardB.push([s, q, local, performance.now()]))
      const t0 = performance.now()
      await a.appendChanges(S, [change('c1'), change('c2')])
      await until('heard by the other process', () => heardB.length > 0, 1000)
      const { lastSeq } = await a.spaceStats(S)
      expect(heardB).toEqual([[S, lastSeq, false, expect.any(Number)]])
      expect(heardB[0][3] - t0).toBeLessThan(1000)
      expect((await b.changesSince(S, 0, 10)).map((c) => c.id)).toEqual(['c1', 'c2'])
      // Known changes again: nobody hears anything.
      await b.appendChanges(S, [change('c2')])
      await sleep(300)
      expect(heardA).toEqual([[S, lastSeq, true]])
      expect(heardB.length).toBe(1)
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  it('the listen connection comes back after its backend is terminated: appends meanwhile and after are heard', async () => {
    const url = await freshDb()
    const log = memoryLogger()
    const a = await PgHubStore.open(url)
    // A first retry after 1 to 2 s: long enough that the append below lands while b is away.
    const b = await PgHubStore.open(url, { log, listenRetry: { minMs: 2000, maxMs: 2000 } })
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    try {
      const heard: Array<[string, number, boolean]> = []
      b.onAppend((s, q, local) => heard.push([s, q, local]))
      const listenBackend = async () =>
        (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [`svc-hub listen ${b.instanceId}`])).rows.map((r) => r.pid)
      const [old] = await listenBackend()
      // Waits (up to 5 s) until the backend is gone, so nothing reaches b through it after this.
      const killed = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1, 5000) AS ok', [old])
      expect(killed.rows[0].ok).toBe(true)
      // While b is away: its notice is lost, and b reports the space once it is back.
      await a.appendChanges(S, [change('gap')])
      expect(await listenBackend()).toEqual([])
      await until('the append made while away', () => heard.length > 0, 10_000)
      expect(heard).toEqual([[S, (await a.spaceStats(S)).lastSeq, false]])
      await until('a new listen backend', async () => (await listenBackend()).some((pid) => pid !== old), 10_000)
      await a.appendChanges('other-space', [change('after')])
      await until('the append after the reconnect', () => heard.length > 1, 1000)
      expect(heard[1]).toEqual(['other-space', (await a.spaceStats('other-space')).lastSeq, false])
      expect(log.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['listen connection dropped; reconnecting', 'listen connection restored']))
    } finally {
      await admin.end()
      await Promise.all([a.close(), b.close()])
    }
  })
})
