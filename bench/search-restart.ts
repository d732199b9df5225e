/**
 * One restart of the search bench (bench/search.ts), in a process of its own as a restarted
 * daemon is: no heap left over from the ingests before it. Reopens the space the way the
 * daemon does (SpaceEngine.openLoading: object rows load after the replica, and a search
 * answers from the saved index meanwhile) and prints one JSON line of timings.
 *
 * `node --import tsx bench/search-restart.ts <sqlite file> <spaceId> <query>`. It then stops as
 * the daemon does (SpaceEngine.close: the search index saves what it holds, deltas compacted
 * into a base), so the next restart starts from a clean stop.
 */
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { SqliteStorageAdapter } from '../node/storage/sqlite.ts'
import { systemEnv } from '../sync/core/env.ts'
import { keyPairFromSeed } from '../sync/crypto/keys.ts'
import { DEFAULT_MODULES } from '../sync/modules/index.ts'
import { searchModule } from '../sync/modules/search/module.ts'
import { runSearch } from '../sync/modules/search/search.ts'
import { SpaceEngine } from '../sync/space/space-engine.ts'

const [file, spaceId, query] = process.argv.slice(2)
// The reader of bench/search.ts's fixture.
const reader = keyPairFromSeed(new Uint8Array(32).fill(3))
const t0 = performance.now()
const storage = new SqliteStorageAdapter(file)
const e = await SpaceEngine.openLoading({ storage, crypto: nodeCryptoProvider({ verify: 'threadpool' }), env: systemEnv }, spaceId, reader, { modules: DEFAULT_MODULES })
const opened = performance.now()
const idx = e.services.of(searchModule)
const first = await runSearch(idx, { query, mode: 'fts' })
const searchable = performance.now()
const answeredBeforeRows = !e.rowsReady
await e.rowsLoaded
const rowsLoaded = performance.now()
const closing = performance.now()
await e.close()
const closed = performance.now()
await storage.close()
process.stdout.write(
  JSON.stringify({
    searchableMs: Math.round(searchable - t0),
    replicaOpenMs: Math.round(opened - t0),
    indexLoadMs: Math.round(searchable - opened),
    rowsLoadedMs: Math.round(rowsLoaded - t0),
    answeredBeforeRows,
    builds: idx.stats.builds,
    loads: idx.stats.loads,
    firstHits: first.hits.length,
    // The clean stop's own cost (a compaction when the deltas were replayed at the open).
    closeMs: Math.round(closed - closing),
  }) + '\n',
)
