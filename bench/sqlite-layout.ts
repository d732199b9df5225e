/**
 * SQLite table layouts (node/storage/sqlite.ts `SqliteLayout`): `npm run bench -- --json --only
 * sqliteLayout`. The same workload through `SqliteStorageAdapter` on a fresh database of each
 * layout, in this process: BATCHES commits of 500 trees x 8 records (random tree ids, 500-byte
 * values, three stores), then a commit rewriting 4,000 existing keys, then 50,000 point reads
 * and 2,000 prefix scans of one tree (8 rows) at random. Each figure of the split layout is a
 * ratio against the inline one measured here (below 1 is faster).
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteStorageAdapter, type SqliteLayout } from '../node/storage/sqlite.ts'
import type { WriteBatch } from '../sync/storage/adapter.ts'

const BATCHES = Number(process.env.BENCH_SQLITE_BATCHES ?? 60)
const TREES = 500
const PER_TREE = 8
const STORES = ['changes', 'records', 'trees']
const progress = (m: string) => process.stderr.write(`[bench sqliteLayout] ${m}\n`)
const r3 = (x: number) => Math.round(x * 1000) / 1000
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

function workload() {
  const batches: WriteBatch[] = []
  const trees: string[] = []
  for (let b = 0; b < BATCHES; b++) {
    const puts: WriteBatch['puts'] = []
    for (let t = 0; t < TREES; t++) {
      const tree = randomBytes(16).toString('hex')
      trees.push(tree)
      for (let i = 0; i < PER_TREE; i++) puts.push({ store: STORES[i % STORES.length], key: `space/${tree}/${i}`, value: randomBytes(500) })
    }
    batches.push({ puts, dels: [] })
  }
  return { batches, trees }
}

async function run(layout: SqliteLayout, w: ReturnType<typeof workload>) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-layout-'))
  const a = new SqliteStorageAdapter(join(dir, 'x.db'), { layout })
  try {
    const commits: number[] = []
    for (const b of w.batches) {
      const t = performance.now()
      await a.commit(b)
      commits.push(performance.now() - t)
    }
    const pick = (n: number) => Array.from({ length: n }, () => w.trees[Math.floor(Math.random() * w.trees.length)])
    const rewrite: WriteBatch = {
      puts: pick(TREES * PER_TREE).map((tree, i) => ({ store: STORES[(i % PER_TREE) % STORES.length], key: `space/${tree}/${i % PER_TREE}`, value: randomBytes(500) })),
      dels: [],
    }
    let t = performance.now()
    await a.commit(rewrite)
    const rewriteMs = performance.now() - t
    const reads = pick(50_000)
    t = performance.now()
    for (let i = 0; i < reads.length; i++) if (!(await a.get(STORES[i % STORES.length], `space/${reads[i]}/${i % STORES.length}`))) throw new Error('a stored key read nothing')
    const getMs = performance.now() - t
    t = performance.now()
    for (const tree of pick(2_000)) if ((await a.scan('changes', { prefix: `space/${tree}/` })).length === 0) throw new Error('a stored tree scanned nothing')
    const scanMs = performance.now() - t
    return { commitP50Ms: p50(commits), commitTotalMs: commits.reduce((x, y) => x + y, 0), rewriteMs, getMs, scanMs }
  } finally {
    await a.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function benchSqliteLayout(): Promise<Record<string, unknown>> {
  const w = workload()
  progress(`${BATCHES} commits of ${TREES * PER_TREE} puts, inline layout`)
  const inline = await run('inline', w)
  progress('the same, split layout')
  const split = await run('split', w)
  const round = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, r3(v)]))
  return {
    workload: { commits: BATCHES, putsPerCommit: TREES * PER_TREE, valueBytes: 500, reads: 50_000, scans: 2_000 },
    inline: round(inline),
    split: round(split),
    commitP50SplitVsInline: r3(split.commitP50Ms / inline.commitP50Ms),
    rewriteSplitVsInline: r3(split.rewriteMs / inline.rewriteMs),
    getSplitVsInline: r3(split.getMs / inline.getMs),
    scanSplitVsInline: r3(split.scanMs / inline.scanMs),
  }
}
