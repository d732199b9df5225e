import { describe, expect, it } from 'vitest'
import { FtsIndex, type IndexOp } from '../../sync/modules/search/fts-index.ts'
import { FtsStore } from '../../sync/modules/search/fts-store.ts'
import { SEARCH_LIMITS, SEARCH_STORES } from '../../sync/modules/search/limits.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'

/** The saved index: deltas per step, compaction into a new base, loads equal to what was saved. */
describe('FtsStore', () => {
  it('saves steps as deltas, compacts past the bound into a new base and drops the old rows', async () => {
    const storage = new MemoryStorageAdapter()
    const store = new FtsStore(storage, 'S')
    const index = FtsIndex.empty()
    let meta = await store.save(undefined, index, [], '0', 'sig', true)
    expect(meta).toMatchObject({ gen: 1, chunks: 1, deltas: 0 })
    const step = 1_000
    let n = 0
    const gens = new Set<number>()
    while (n < SEARCH_LIMITS.compactAfterOps + 2 * step) {
      const ops: IndexOp[] = []
      for (let i = 0; i < step; i++, n++) ops.push({ k: `o${n}/basic`, t: `word${n % 97} item${n}` })
      // A removal and a rewrite in every step, as edits and deletes bring.
      ops.push({ k: `o${n - step}/basic` }, { k: `o${n - step + 1}/basic`, t: 'rewritten' })
      for (const op of ops) index.apply(op)
      meta = await store.save(meta, index, ops, String(n), 'sig')
      gens.add(meta.gen)
    }
    expect(gens.size).toBeGreaterThan(1)
    const rows = await storage.scan(SEARCH_STORES.fts, { prefix: 'S/' })
    // Only the current generation's base and deltas remain, plus the meta.
    expect(
      rows.every(([k]) => k === 'S/meta' || k.startsWith(`S/base/${String(meta.gen).padStart(8, '0')}/`) || k.startsWith(`S/delta/${String(meta.gen).padStart(8, '0')}/`)),
    ).toBe(true)
    expect(rows.length).toBe(1 + meta.chunks + meta.deltas)
    const loaded = (await store.load((await store.meta())!))!
    expect(loaded.size).toBe(index.size)
    for (const q of ['word5', 'rewritten', 'item12000', 'item0']) {
      expect(
        loaded
          .search(q, { limit: 100_000 })
          .map((h) => h.key)
          .sort(),
      ).toEqual(
        index
          .search(q, { limit: 100_000 })
          .map((h) => h.key)
          .sort(),
      )
    }
  })

  it('a base whose chunks do not all load is no index (the service rebuilds)', async () => {
    const storage = new MemoryStorageAdapter()
    const store = new FtsStore(storage, 'S')
    const index = FtsIndex.empty()
    index.apply({ k: 'a/basic', t: 'x' })
    const meta = await store.save(undefined, index, [], '1', 'sig', true)
    await storage.commit({ puts: [], dels: [{ store: SEARCH_STORES.fts, key: `S/base/${String(meta.gen).padStart(8, '0')}/00000000` }] })
    expect(await store.load(meta)).toBeUndefined()
  })
})
