import { describe, expect, it } from 'vitest'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { SEARCH_LIMITS } from '../../sync/modules/search/limits.ts'
import { searchModule } from '../../sync/modules/search/module.ts'
import { runSearch } from '../../sync/modules/search/search.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { keyFor, seededEnv } from '../helpers.ts'

const named = (i: number) => ({ initialProperties: { core: { name: `Comet ${i}`, description: i % 12 ? 'periodic tail' : 'sungrazer' } } })

/** The saved index's meta, read as the next start reads it. */
async function savedMeta(storage: MemoryStorageAdapter, spaceId: string) {
  const raw = await storage.get('search_fts', `${spaceId}/meta`)
  return raw ? (JSON.parse(new TextDecoder().decode(raw)) as { opsSinceBase: number; versionSeq: string; deltas: number }) : undefined
}

/** Opens (and reopens) account `n` over one storage, as a daemon restarting does. */
const opener = (storage: MemoryStorageAdapter, n: number) => async () =>
  AccountEngine.open({ storage, crypto: await defaultCryptoProvider(), env: seededEnv(n), accountKey: keyFor(n), modules: DEFAULT_MODULES, spacesInBackground: true })

describe('closing the account saves the search index (a clean daemon stop)', () => {
  it('commits still waiting for the drain are saved, and the next start rebuilds nothing', async () => {
    const storage = new MemoryStorageAdapter()
    const open = opener(storage, 1)
    const first = await open()
    const { id: spaceId } = await first.createSpace({ name: 'Sky' })
    const space = first.space(spaceId)
    const idx = space.services.of(searchModule)
    await idx.settled()
    // The last writes land just before the stop: their drain has not run (drainQuietMs).
    for (let i = 0; i < 30; i++) await space.createObject(named(i))
    const version = space.replica.versionId()
    await first.close()
    expect((await savedMeta(storage, spaceId))?.versionSeq).toBe(version)

    const again = await open()
    await again.loaded(spaceId)
    const reopened = again.space(spaceId).services.of(searchModule)
    expect((await runSearch(reopened, { query: 'sungrazer', mode: 'fts', limit: 50 })).hits.length).toBe(3)
    expect(reopened.stats).toMatchObject({ builds: 0, loads: 1 })
    await again.close()
  })

  it('deltas of a burst are compacted into a base at close, so the next start replays none', async () => {
    const storage = new MemoryStorageAdapter()
    const open = opener(storage, 2)
    const first = await open()
    const { id: spaceId } = await first.createSpace({ name: 'Sky' })
    const space = first.space(spaceId)
    const idx = space.services.of(searchModule)
    // In memory (searched), as during a sync the user watches.
    await runSearch(idx, { query: 'comet', mode: 'fts' })
    const n = SEARCH_LIMITS.compactIdleOps + 10
    for (let i = 0; i < n; i++) await space.createObject(named(i))
    await idx.settled()
    // Saved as deltas, below the size that compacts on its own.
    expect((await savedMeta(storage, spaceId))!.opsSinceBase).toBeGreaterThanOrEqual(SEARCH_LIMITS.compactIdleOps)
    await first.close()
    expect(await savedMeta(storage, spaceId)).toMatchObject({ opsSinceBase: 0, deltas: 0 })

    const again = await open()
    await again.loaded(spaceId)
    const reopened = again.space(spaceId).services.of(searchModule)
    expect((await runSearch(reopened, { query: 'sungrazer', mode: 'fts', limit: 200 })).hits.length).toBe(Math.ceil(n / 12))
    expect(reopened.stats.builds).toBe(0)
    await again.close()
  })
})
