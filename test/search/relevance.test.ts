import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { HttpEmbedder } from '../../sync/modules/search/embedder.ts'
import { createSearchModule, searchModule } from '../../sync/modules/search/module.ts'
import { runSearch } from '../../sync/modules/search/search.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { deps, keyFor } from '../helpers.ts'
import { startEmbedder, type TestEmbedder } from './embedder-server.ts'
import { FIXTURE_SYNONYMS, fixtureDocs, fixtureQueries, mrrAt10, ndcgAt10 } from './relevance-fixture.ts'

/**
 * Relevance on a fixed fixture (relevance-fixture.ts: 240 documents, 120 graded queries, a third
 * of them synonyms no document contains). Prints MRR@10 and nDCG@10 for fts and for hybrid with
 * the deterministic test embedder; asserts fts answers the word queries and hybrid adds the
 * synonym ones without losing the others.
 */
let emb: TestEmbedder
beforeAll(async () => {
  emb = await startEmbedder({ synonyms: FIXTURE_SYNONYMS })
})
afterAll(async () => emb.close())

describe('relevance fixture', () => {
  it('MRR@10 for fts and hybrid', { timeout: 120_000 }, async () => {
    const module = createSearchModule({ embedders: () => new HttpEmbedder(emb.url, 'test-64') })
    const modules = DEFAULT_MODULES.map((m) => (m.name === searchModule.name ? module : m))
    const e = await SpaceEngine.create(await deps(1), keyFor(1), { modules })
    const docs = fixtureDocs()
    expect(docs.length).toBeGreaterThanOrEqual(200)
    const byObject = new Map<string, string>()
    for (const d of docs) byObject.set(await e.createObject({ initialProperties: { core: { name: d.name, description: d.description } } }), d.id)
    const idx = e.services.of(module)
    await idx.settled()
    await idx.vectors.idle()
    expect(idx.vectors.store?.size).toBe(docs.length)

    const queries = fixtureQueries(docs)
    const run = async (mode: 'fts' | 'hybrid') => {
      const ranked: string[][] = []
      for (const q of queries) {
        const res = await runSearch(idx, { query: q.query, mode, limit: 10 })
        expect(res.mode).toBe(mode)
        ranked.push(res.hits.map((h) => byObject.get(h.objectId)!))
      }
      return ranked
    }
    const fts = await run('fts')
    const hybrid = await run('hybrid')
    const words = queries.map((q, i) => [q, i] as const).filter(([q]) => !q.synonym)
    const pick = (ranked: string[][], sel: ReadonlyArray<readonly [unknown, number]>) => sel.map(([, i]) => ranked[i])
    const report = {
      documents: docs.length,
      queries: queries.length,
      fts: {
        mrr10: mrrAt10(fts, queries),
        ndcg10: ndcgAt10(fts, queries),
        mrr10Words: mrrAt10(
          pick(fts, words),
          words.map(([q]) => q),
        ),
      },
      hybrid: {
        mrr10: mrrAt10(hybrid, queries),
        ndcg10: ndcgAt10(hybrid, queries),
        mrr10Words: mrrAt10(
          pick(hybrid, words),
          words.map(([q]) => q),
        ),
      },
    }
    console.log(`search relevance ${JSON.stringify(report)}`)
    expect(report.fts.mrr10Words).toBeGreaterThanOrEqual(0.9)
    expect(report.hybrid.mrr10Words).toBeGreaterThanOrEqual(0.9)
    expect(report.hybrid.mrr10).toBeGreaterThan(report.fts.mrr10 + 0.1)
  })
})
