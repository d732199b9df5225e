/**
 * Search benchmark (issue 16): `npm run bench -- --json --only search`. In process, over
 * SQLite in a temp dir, with the daemon's crypto provider.
 *
 * Fixture: a space whose owner declared a type with two string properties, and a backlog of
 * OBJECTS objects (a derived root plus one signed, sealed change setting `core.name` and the two
 * properties: 8 words each from a 4,000-word vocabulary) by a writer member. A reader replica
 * ingests the whole backlog in batches of BATCH items, as a sync backlog arrives.
 *
 * - ingestRatio: the backlog's ingest rate on a replica running the search module against one
 *   without it (target >= 0.8), ingest settled (rows and hooks) at the end; `ingestRatioIndexed`
 *   the same until the index has also drained everything (the index's whole cost). Four
 *   ingests in the order with, without, without, with (the sums compared): the machine's load
 *   drifts over the minutes they take, and this order cancels a steady drift. `ingestPairs`
 *   has each pair's own ratio.
 * - ftsP50Ms / ftsP99Ms: `runSearch` mode fts (one or two vocabulary words, limit 20; target p50
 *   <= 10 ms).
 * - textP50Ms: an objects query with `{$text: {$search: word}}` (limit 20) answered by the index;
 *   baseline: the same filter as a substring scan (the query engine without the index).
 * - bytesPerObject: the saved index (base and deltas) over OBJECTS.
 * - restart: the space reopened from its SQLite file as the daemon reopens it after a stop, in
 *   a process of its own (bench/search-restart.ts; SpaceEngine.openLoading: the object rows
 *   load after the replica, and a search answers from the saved index meanwhile); `searchableMs`
 *   from the open to the first answered search, `replicaOpenMs` the replica's load,
 *   `indexLoadMs` the search's own (the saved index and the first answer), `rowsLoadedMs` until
 *   every object row is in the object index, `builds` (0: nothing re-indexed), `closeMs` the
 *   clean stop that follows (SpaceEngine.close).
 *   `restartAfterCrash` comes first: the ingesting replica's storage is closed under it right
 *   after the backlog, as a crash leaves it (the index's deltas not compacted: the restart
 *   replays them). That restart then stops cleanly (SpaceEngine.close: the search index
 *   compacts its deltas into a base), and `restart` is the next start, after a clean stop.
 *
 * `BENCH_SEARCH_OBJECTS` (default 100,000), `BENCH_SEARCH_QUERIES` (300).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { SqliteStorageAdapter } from '../node/storage/sqlite.ts'
import { encodeCanonical } from '../sync/core/encoding.ts'
import { systemEnv } from '../sync/core/env.ts'
import type { ChangePayload } from '../sync/crdt/ops.ts'
import { seal } from '../sync/crypto/box.ts'
import { identityOf, keyPairFromSeed } from '../sync/crypto/keys.ts'
import { derivedRoot, signChange } from '../sync/dag/change.ts'
import { DEFAULT_MODULES } from '../sync/modules/index.ts'
import { searchModule } from '../sync/modules/search/module.ts'
import { runSearch } from '../sync/modules/search/search.ts'
import { runQuery } from '../sync/query/index.ts'
import { ROW_DS, ROW_ID } from '../sync/space/schema.ts'
import { SpaceEngine } from '../sync/space/space-engine.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'

const OBJECTS = Number(process.env.BENCH_SEARCH_OBJECTS ?? 100_000)
const QUERIES = Number(process.env.BENCH_SEARCH_QUERIES ?? 300)
const BATCH = 5_000
const progress = (m: string) => process.stderr.write(`[bench search] ${m}\n`)
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const r3 = (x: number) => Math.round(x * 1000) / 1000
const crypto = nodeCryptoProvider({ verify: 'threadpool' })
const owner = keyPairFromSeed(new Uint8Array(32).fill(1))
const writer = keyPairFromSeed(new Uint8Array(32).fill(2))
const reader = keyPairFromSeed(new Uint8Array(32).fill(3))
const WITHOUT_SEARCH = DEFAULT_MODULES.filter((m) => m.name !== searchModule.name)

/** A deterministic pseudo-word vocabulary (syllables), so queries hit a realistic spread. */
function vocabulary(n: number): string[] {
  const syl = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'qua', 'bri', 'dor', 'fen', 'gal', 'hol', 'jin', 'pra', 'stu', 'wex', 'yor']
  const out: string[] = []
  for (let i = 0; out.length < n; i++) out.push(syl[i % 20] + syl[Math.floor(i / 20) % 20] + syl[Math.floor(i / 400) % 20])
  return out
}
const VOCAB = vocabulary(4_000)
let seed = 12345
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32
const words = (n: number) => Array.from({ length: n }, () => VOCAB[Math.floor(rnd() * rnd() * VOCAB.length)]).join(' ')

async function buildBacklog() {
  const src = await SpaceEngine.create({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv }, owner, { modules: WITHOUT_SEARCH })
  await src.replica.addMember(identityOf(writer.publicKey), 'writer')
  await src.replica.addMember(identityOf(reader.publicKey), 'reader')
  const typeId = (await src.services.types.createType({ name: 'Note', xKey: 'note' })).id
  const p1 = (await src.services.types.createProperty(typeId, { name: 'Summary', kind: 'string' })).propId
  const p2 = (await src.services.types.createProperty(typeId, { name: 'Body', kind: 'string' })).propId
  const setup = (await src.replica.allChanges()).map(({ id, raw }) => ({ id, raw }))
  const replica = src.replica
  const aclHeadId = (replica.acl.citation() as { head: string }).head
  const readKeyId = replica.acl.stateAt([aclHeadId]).readKeyId!
  const rk = replica.keyring.get(readKeyId)!
  const items: Array<{ id: string; raw: Uint8Array }> = []
  for (let i = 0; i < OBJECTS; i++) {
    const root = derivedRoot(replica.spaceId, encodeCanonical({ kind: 'object', seed: `bench-${i}` }))
    const payload: ChangePayload = {
      ops: [
        { op: 'set', ds: ROW_DS, id: ROW_ID, path: 'core.types', value: [typeId] },
        { op: 'set', ds: ROW_DS, id: ROW_ID, path: 'core.name', value: words(2) },
        { op: 'set', ds: ROW_DS, id: ROW_ID, path: `${typeId}.${p1}`, value: words(8) },
        { op: 'set', ds: ROW_DS, id: ROW_ID, path: `${typeId}.${p2}`, value: words(8) },
      ],
    }
    const change = await signChange(crypto, writer, {
      spaceId: replica.spaceId,
      treeId: root.id,
      prevIds: [root.id],
      aclHeadId,
      seq: i + 1,
      lamport: 1,
      timestamp: Date.now(),
      readKeyId,
      payload: seal(systemEnv, rk, encodeCanonical(payload)),
    })
    items.push({ id: root.id, raw: root.raw }, { id: change.id, raw: change.raw })
    if ((i + 1) % 20_000 === 0) progress(`signed ${i + 1} / ${OBJECTS} objects`)
  }
  return { spaceId: replica.spaceId, setup, items }
}

async function ingestAll(dir: string, name: string, backlog: Awaited<ReturnType<typeof buildBacklog>>, modules: typeof DEFAULT_MODULES) {
  const storage = new SqliteStorageAdapter(join(dir, `${name}.db`))
  const deps = { storage, crypto, env: systemEnv }
  const e = await SpaceEngine.open(deps, backlog.spaceId, reader, { modules })
  const setupRep = await e.replica.ingest(backlog.setup)
  if (setupRep.rejected.length) throw new Error(`setup rejected: ${JSON.stringify(setupRep.rejected[0])}`)
  await e.settled()
  // In memory before the backlog, as in a space someone searches: the ingest then pays the
  // indexing itself (an index left on disk only logs what moved, service.ts).
  if (modules.includes(searchModule)) await e.services.of(searchModule).searchable()
  const t0 = performance.now()
  for (let i = 0; i < backlog.items.length; i += BATCH) {
    const rep = await e.replica.ingest(backlog.items.slice(i, i + BATCH))
    if (rep.rejected.length) throw new Error(`backlog rejected: ${JSON.stringify(rep.rejected[0])}`)
  }
  await e.settled()
  const ingestMs = performance.now() - t0
  let indexedMs = ingestMs
  if (modules.includes(searchModule)) {
    await e.services.of(searchModule).settled()
    indexedMs = performance.now() - t0
  }
  progress(`${name}: ingest ${Math.round(ingestMs)} ms, indexed ${Math.round(indexedMs)} ms`)
  return { e, storage, deps, ingestMs, indexedMs }
}

async function timeMany(n: number, fn: (i: number) => unknown): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await fn(i)
    out.push(performance.now() - t)
  }
  return out
}

/**
 * Query figures on the ingested replica (its index in memory), then closed: returned are only
 * numbers, so its engine is garbage before the restarts (a restarted daemon holds no other).
 */
async function queryFigures(indexed: Awaited<ReturnType<typeof ingestAll>>) {
  const idx = indexed.e.services.of(searchModule)
  const held = idx.loaded?.size ?? 0
  if (held < OBJECTS) throw new Error(`index holds ${held} documents`)
  const queries = Array.from({ length: QUERIES }, (_, i) => (i % 3 === 2 ? words(2) : words(1)))
  await timeMany(20, (i) => runSearch(idx, { query: queries[i], mode: 'fts' }))
  let hits = 0
  const fts = await timeMany(QUERIES, async (i) => (hits += (await runSearch(idx, { query: queries[i], mode: 'fts' })).hits.length))
  const source = indexed.e.objectSource()
  const textQ = (i: number) => ({ filter: { $text: { $search: queries[(i * 3) % QUERIES].split(' ')[0] } }, limit: 20 })
  const text = await timeMany(Math.min(QUERIES, 100), (i) => runQuery(source, textQ(i)))
  const rows = [...indexed.e.objectDocs()]
  const scan = await timeMany(10, (i) => runQuery(rows, textQ(i)))
  const bytes = await idx.diskBytes()
  // Closed under the engine, as a crash right after the backlog leaves it.
  await indexed.storage.close()
  return {
    ingest: { ingestMs: indexed.ingestMs, indexedMs: indexed.indexedMs },
    firstQuery: queries[0],
    figures: {
      ftsP50Ms: r3(pct(fts, 50)),
      ftsP99Ms: r3(pct(fts, 99)),
      ftsMeanHits: r3(hits / QUERIES),
      textP50Ms: r3(pct(text, 50)),
      textScanP50Ms: r3(pct(scan, 50)),
      textVsScan: r3(pct(text, 50) / pct(scan, 50)),
      indexDocuments: held,
      indexBytes: bytes,
      bytesPerObject: Math.round(bytes / OBJECTS),
    },
  }
}

/**
 * Reopens the space as a restarted daemon does, in a process of its own (bench/search-restart.ts:
 * a restarted daemon carries no heap of the ingests before), and returns its timings.
 */
function restartOnce(file: string, spaceId: string, query: string): Record<string, unknown> {
  const args = [...process.execArgv, join(import.meta.dirname, 'search-restart.ts'), file, spaceId, query]
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 300_000 })
  if (run.status !== 0) throw new Error(`restart failed (${run.status}): ${run.stderr.slice(-2_000)}`)
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>
}

export async function benchSearch(): Promise<Record<string, unknown>> {
  const load = { loadavg1m: r3(loadavg()[0]), cores: cpus().length }
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-search-'))
  try {
    progress(`building a backlog of ${OBJECTS} objects`)
    const backlog = await buildBacklog()
    // With, without, without, with: a steady drift of the machine's load cancels in the sums.
    // The last run's engine stays for the queries; the others are closed and let go first, so
    // no ingest runs beside another's heap.
    const timed = async (name: string, modules: typeof DEFAULT_MODULES) => {
      const run = await ingestAll(dir, name, backlog, modules)
      if (modules.includes(searchModule)) await run.e.services.of(searchModule).settled()
      await run.storage.close()
      return { ingestMs: run.ingestMs, indexedMs: run.indexedMs }
    }
    const indexedA = await timed('indexedA', DEFAULT_MODULES)
    const plainA = await timed('plain', WITHOUT_SEARCH)
    const plainB = await timed('plainB', WITHOUT_SEARCH)
    const q = await queryFigures(await ingestAll(dir, 'indexed', backlog, DEFAULT_MODULES))
    const indexedB = q.ingest
    const plainMs = plainA.ingestMs + plainB.ingestMs
    progress('restart')
    // First as a crash right after the backlog left it; that process then stops cleanly, and
    // the second restart is the daemon's usual one, after a clean stop.
    const restartAfterCrash = restartOnce(join(dir, 'indexed.db'), backlog.spaceId, q.firstQuery)
    const restart = restartOnce(join(dir, 'indexed.db'), backlog.spaceId, q.firstQuery)

    return {
      machine: load,
      objects: OBJECTS,
      backlogItems: backlog.items.length,
      ingestPlainMs: [Math.round(plainA.ingestMs), Math.round(plainB.ingestMs)],
      ingestIndexedMs: [Math.round(indexedA.ingestMs), Math.round(indexedB.ingestMs)],
      ingestRatio: r3(plainMs / (indexedA.ingestMs + indexedB.ingestMs)),
      ingestRatioIndexed: r3(plainMs / (indexedA.indexedMs + indexedB.indexedMs)),
      ingestPairs: [r3(plainA.ingestMs / indexedA.ingestMs), r3(plainB.ingestMs / indexedB.ingestMs)],
      ...q.figures,
      restart,
      restartAfterCrash,
      machineAfter: { loadavg1m: r3(loadavg()[0]) },
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
