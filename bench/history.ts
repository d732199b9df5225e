/**
 * Version history benchmark (issue 5): `GET {O}/history` (first page, default limit) on an object
 * with 10,000 changes, through the real History service on the daemon's storage (SQLite
 * adapter, temp dir). Target: list p50 <= 10 ms.
 *
 * The object keeps being written while it is read: every round writes one change (outside the
 * timed region) and then lists, so the figure includes whatever a new change costs the next
 * read. `historyVsScan` = list p50 / p50 of a raw storage scan of the same tree's changes (the
 * bytes any history listing has to come from), measured interleaved in the same run.
 * `recordFilterP50Ms` lists one record's changes (1 in RECORDS matches, so a page scans
 * ~RECORDS x limit changes); `firstListMs` is the one-time load of the tree on first use.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteStorageAdapter } from '../node/storage/sqlite.ts'
import { systemEnv } from '../sync/core/env.ts'
import { defaultCryptoProvider } from '../sync/crypto/provider.ts'
import { keyPairFromSeed } from '../sync/crypto/keys.ts'
import type { Op } from '../sync/crdt/ops.ts'
import { treePrefix } from '../sync/replica/storage-keys.ts'
import { HISTORY_LIMITS, History } from '../sync/space/history.ts'
import { spacePolicy } from '../sync/space/schema.ts'
import { SpaceEngine } from '../sync/space/space-engine.ts'

const CHANGES = Number(process.env.BENCH_HISTORY_CHANGES ?? 10_000)
const RUNS = Number(process.env.BENCH_HISTORY_RUNS ?? 101)
const WARMUP = 10
const RECORDS = 20
const TARGET_MS = 10

const progress = (msg: string) => process.stderr.write(`[bench history] ${msg}\n`)

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]
}
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d

/** Change k: one field of one of RECORDS tasks, every 10th with a trace id. */
function opsOf(k: number): Op[] {
  return [{ op: 'set', ds: 'tasks', id: `t${k % RECORDS}`, path: `f${k % 7}`, value: k }]
}

export async function benchHistory(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-history-'))
  const storage = new SqliteStorageAdapter(join(dir, 'history.db'))
  try {
    const engine = await SpaceEngine.create({ storage, crypto: await defaultCryptoProvider(), env: systemEnv }, keyPairFromSeed(new Uint8Array(32).fill(1)))
    const replica = engine.replica
    const obj = await engine.createObject()
    progress(`writing ${CHANGES} changes`)
    const t0 = performance.now()
    for (let k = 0; k < CHANGES; k++) {
      await replica.write(obj, opsOf(k), k % 10 === 0 ? [`trace-${k}`] : undefined)
      if (k % 2000 === 1999) progress(`${k + 1} changes`)
    }
    await engine.settled()
    const writeMs = performance.now() - t0

    // The service the history routes use, created when the object is first read, as there.
    const history = new History(replica, spacePolicy)
    let c0 = performance.now()
    const first = await history.list(obj)
    const firstListMs = performance.now() - c0
    if (first.changes.length !== HISTORY_LIMITS.defaultLimit || first.cursor === null) throw new Error('first page is not full')

    const prefix = treePrefix(replica.spaceId, obj)
    const wall = { list: [] as number[], filter: [] as number[], scan: [] as number[] }
    let written = CHANGES
    for (let k = 0; k < WARMUP + RUNS; k++) {
      const warm = k < WARMUP
      const { changeId } = await replica.write(obj, opsOf(written), undefined)
      written++
      await engine.settled()

      c0 = performance.now()
      const page = await history.list(obj)
      const listMs = performance.now() - c0
      if (page.changes[0]?.version !== changeId) throw new Error('the newest change is not listed first')
      if (page.changes.length !== HISTORY_LIMITS.defaultLimit) throw new Error('short page')

      const record = `t${k % RECORDS}`
      c0 = performance.now()
      const filtered = await history.list(obj, { dataset: 'tasks', recordId: record })
      const filterMs = performance.now() - c0
      if (filtered.changes.length !== HISTORY_LIMITS.defaultLimit || filtered.changes.some((e) => e.recordIds[0]?.id !== record)) throw new Error('record filter is wrong')

      c0 = performance.now()
      const rows = await storage.scan('changes', { prefix })
      const scanMs = performance.now() - c0
      // The tree's root change plus every write.
      if (rows.length !== written + 2) throw new Error(`scan found ${rows.length} changes, expected ${written + 2}`)

      if (warm) continue
      wall.list.push(listMs)
      wall.filter.push(filterMs)
      wall.scan.push(scanMs)
    }

    const listP50 = pct(wall.list, 50)
    const scanP50 = pct(wall.scan, 50)
    return {
      changes: written,
      runs: RUNS,
      storage: storage.name,
      limit: HISTORY_LIMITS.defaultLimit,
      writeChangesMs: Math.round(writeMs),
      firstListMs: round(firstListMs),
      listP50Ms: round(listP50),
      listP99Ms: round(pct(wall.list, 99)),
      recordFilterP50Ms: round(pct(wall.filter, 50)),
      recordFilterP99Ms: round(pct(wall.filter, 99)),
      rawScanP50Ms: round(scanP50),
      rawScanP99Ms: round(pct(wall.scan, 99)),
      historyVsScan: round(listP50 / scanP50),
      targetMs: TARGET_MS,
      meetsTarget: listP50 <= TARGET_MS,
    }
  } finally {
    await storage.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

// Direct run: `npx tsx bench/history.ts`.
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchHistory(), null, 2))
}
