import { describe, expect, it } from 'vitest'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { searchModule } from '../../sync/modules/search/module.ts'
import { runSearch } from '../../sync/modules/search/search.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { deps, keyFor } from '../helpers.ts'

/** Storage whose batched reads answer a macrotask later, as IndexedDB's requests do. */
class SlowReads extends MemoryStorageAdapter {
  override async getMany(store: string, keys: readonly string[]) {
    await new Promise((r) => setTimeout(r, 2))
    return super.getMany(store, keys)
  }
}

describe('restart over storage that answers in later tasks', () => {
  it('the saved index is current after a reopen: its catalog is not read from half-loaded rows', async () => {
    const storage = new SlowReads()
    const a = await SpaceEngine.create(await deps(1, storage), keyFor(1), { modules: DEFAULT_MODULES })
    const typeId = (await a.services.types.createType({ name: 'Note', xKey: 'note' })).id
    const prop = (await a.services.types.createProperty(typeId, { name: 'Body', kind: 'string' })).propId
    for (let i = 0; i < 30; i++) await a.createObject({ types: [typeId], initialProperties: { core: { name: `Note ${i}` }, [typeId]: { [prop]: i % 2 ? 'aurora' : 'zodiacal' } } })
    const idx = a.services.of(searchModule)
    expect((await runSearch(idx, { query: 'aurora', mode: 'fts', limit: 50 })).hits.length).toBe(15)
    await idx.settled()

    const b = await SpaceEngine.open(await deps(1, storage), a.spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    const again = b.services.of(searchModule)
    expect((await runSearch(again, { query: 'aurora', mode: 'fts', limit: 50 })).hits.length).toBe(15)
    expect(again.stats).toMatchObject({ builds: 0, loads: 1 })
  })
})
