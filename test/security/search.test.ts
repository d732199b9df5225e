import { createServer, type Server } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { EmbedderUnavailable, HttpEmbedder, parseEmbeddings } from '../../sync/modules/search/embedder.ts'
import { SEARCH_LIMITS } from '../../sync/modules/search/limits.ts'
import { searchModule } from '../../sync/modules/search/module.ts'
import { runSearch } from '../../sync/modules/search/search.ts'
import { twoMembers } from '../space/helpers.ts'

/**
 * Search's attack surfaces: a member's content (indexed on every peer that holds it), a
 * configured embedder's replies (another process: anything may come back), and queries.
 */
const servers: Server[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())))
})

async function serve(handler: (body: string, res: import('node:http').ServerResponse) => void): Promise<string> {
  const s = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => handler(body, res))
  })
  servers.push(s)
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(s.address() as { port: number }).port}/v1/embeddings`
}

describe('a member writes huge text to be indexed on every peer', () => {
  it('indexes at most maxDocChars of a document; the rest is never tokenized', async () => {
    const { a, b, sync } = await twoMembers()
    const head = 'needle ' + 'filler '.repeat(SEARCH_LIMITS.maxDocChars / 7)
    const o = await b.createObject({ initialProperties: { core: { name: 'Big', description: head + ' haystackend' } } })
    await sync()
    const idx = a.services.of(searchModule)
    expect((await runSearch(idx, { query: 'needle', mode: 'fts' })).hits.map((h) => h.objectId)).toEqual([o])
    expect((await runSearch(idx, { query: 'haystackend', mode: 'fts' })).hits).toEqual([])
  })

  it('a record id holding slashes cannot forge another document key', async () => {
    const { a } = await twoMembers()
    const o = await a.createObject({ initialProperties: { core: { name: 'Host' } } })
    // Declared dataset with caller-chosen ids, marked search.
    const t = (await a.services.types.createType({ name: 'T', xKey: 't' })).id
    await a.services.types.createPart(t, { key: 'p', datasets: [{ key: 'n', idRule: 'user', search: true, fields: { s: { type: 'string' } } }] })
    const obj = await a.createObject({ types: [t] })
    await a.modify({ objectId: obj, dataset: `${t}_n`, records: [{ id: `${o}/basic/x/y`, ops: [{ type: '$set', path: 's', value: 'slashy' }] }] })
    const [hit] = (await runSearch(a.services.of(searchModule), { query: 'slashy', mode: 'fts' })).hits
    expect(hit).toMatchObject({ objectId: obj, scope: 'data', recordId: `${o}/basic/x/y` })
  })
})

describe('a configured embedder answers garbage', () => {
  it('wrong counts, wrong sizes, non-numbers, oversized vectors and bad indexes are "unavailable", never a crash', () => {
    const bad: unknown[] = [
      null,
      { data: 'x' },
      { data: [] },
      { data: [{ embedding: [1, 2] }, { embedding: [1] }] },
      { data: [{ embedding: ['a'] }] },
      { data: [{ embedding: [Number.NaN] }] },
      { data: [{ embedding: new Array(SEARCH_LIMITS.maxDims + 1).fill(1) }] },
      { data: [{ embedding: [1], index: 5 }] },
    ]
    for (const body of bad)
      expect(() => parseEmbeddings(body, body && (body as { data?: unknown[] }).data?.length === 2 ? 2 : 1), JSON.stringify(body)?.slice(0, 80)).toThrow(EmbedderUnavailable)
  })

  it('a reply that is not JSON, a 500, and a server that never answers (timeout) are unavailable', async () => {
    const notJson = await serve((_b, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{oops'))
    await expect(new HttpEmbedder(notJson, 'm').embed(['x'])).rejects.toThrow(EmbedderUnavailable)
    const err = await serve((_b, res) => res.writeHead(500).end())
    await expect(new HttpEmbedder(err, 'm').embed(['x'])).rejects.toThrow(EmbedderUnavailable)
    const silent = await serve(() => undefined)
    await expect(new HttpEmbedder(silent, 'm', undefined, 200).embed(['x'])).rejects.toThrow(EmbedderUnavailable)
  })
})

describe('queries built to be expensive', () => {
  it('a maximal query of long fuzzy words and maximal require/exclude lists answers (terms are capped)', async () => {
    const { a } = await twoMembers()
    for (let i = 0; i < 50; i++) await a.createObject({ initialProperties: { core: { name: `word${i} abcdefghij${i}` } } })
    const long = Array.from({ length: 200 }, (_, i) => `abcdefgh${i}`)
      .join(' ')
      .slice(0, SEARCH_LIMITS.maxQueryChars)
    const words = Array.from({ length: SEARCH_LIMITS.maxTerms }, (_, i) => `abcdefghij${i}`)
    const res = await runSearch(a.services.of(searchModule), { query: long, mode: 'fts', require: words, exclude: words })
    expect(res.hits).toEqual([])
  })
})
