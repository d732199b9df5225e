import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { searchModule } from '../../sync/modules/search/module.ts'
import { bundleRootId } from '../../sync/space/bundles/model.ts'
import { startEmbedder, type TestEmbedder } from '../search/embedder-server.ts'
import { bootApp, call, expectError, newObject, newSpace, ok, type Booted } from './helpers.ts'

/** `POST {S}/search` over `app.inject`: every mode, every code, and `$text` in object queries. */
let b: Booted
let emb: TestEmbedder
beforeAll(async () => {
  b = await bootApp()
  emb = await startEmbedder()
})
afterAll(async () => {
  await b.close()
  await emb.close()
})

const search = (spaceId: string, body: unknown) => call(b.app, 'POST', `/v1/spaces/${spaceId}/search`, body)
const hitsOf = async (spaceId: string, body: Record<string, unknown>) => (await ok(search(spaceId, { mode: 'fts', ...body }))).hits as any[]
const named = (name: string, description?: string) => ({ initialProperties: { core: { name, ...(description ? { description } : {}) } } })
const settings = (spaceId: string, body: unknown) => ok(call(b.app, 'PATCH', `/v1/spaces/${spaceId}/settings`, body), 204)

describe('POST {S}/search: full text', () => {
  let S: string
  let dune: string
  let hobbit: string
  beforeAll(async () => {
    S = await newSpace(b.app, 'Books')
    dune = await newObject(b.app, S, named('Dune', 'Desert planet, spice and sandworms'))
    hobbit = await newObject(b.app, S, named('The Hobbit', 'A hobbit, a dragon and a café'))
    await newObject(b.app, S, named('Neuromancer', 'Cyberspace cowboy'))
  })

  it('finds objects by name and description (scope basic) with the hit shape of docs/search.md', async () => {
    const res = await ok(search(S, { query: 'sandworms' }))
    expect(res).toMatchObject({ mode: 'fts', vectorStatus: 'disabled' })
    expect(res.hits).toHaveLength(1)
    const [hit] = res.hits
    expect(hit).toMatchObject({ objectId: dune, scope: 'basic' })
    expect(hit.recordId).toBeUndefined()
    expect(typeof hit.score).toBe('number')
    const [[s, e]] = hit.snippet.ranges
    expect(hit.snippet.text.slice(s, e)).toBe('sandworms')
  })

  it('matches every word, the last as a prefix, case and diacritics folded', async () => {
    expect((await hitsOf(S, { query: 'hobbit drag' })).map((h) => h.objectId)).toEqual([hobbit])
    expect((await hitsOf(S, { query: 'CAFE' })).map((h) => h.objectId)).toEqual([hobbit])
    expect(await hitsOf(S, { query: 'hobbit sandworms' })).toEqual([])
  })

  it('require and exclude words; limit', async () => {
    const both = await newObject(b.app, S, named('Desert dragon'))
    expect((await hitsOf(S, { query: 'dragon', exclude: ['desert'] })).map((h) => h.objectId)).toEqual([hobbit])
    expect((await hitsOf(S, { query: 'dragon', require: ['desert'] })).map((h) => h.objectId)).toEqual([both])
    expect(await hitsOf(S, { query: 'dragon', limit: 1 })).toHaveLength(1)
  })

  it('edits and deletes show at once', async () => {
    const o = await newObject(b.app, S, named('Quixotic'))
    expect(await hitsOf(S, { query: 'quixotic' })).toHaveLength(1)
    await ok(call(b.app, 'POST', `/v1/spaces/${S}/properties/${o}/set/core`, { name: 'Windmills' }))
    expect(await hitsOf(S, { query: 'quixotic' })).toEqual([])
    expect((await hitsOf(S, { query: 'windmills' })).map((h) => h.objectId)).toEqual([o])
    await ok(call(b.app, 'DELETE', `/v1/spaces/${S}/objects/${o}`), 204)
    expect(await hitsOf(S, { query: 'windmills' })).toEqual([])
  })

  it('hybrid without an embedder runs fts and says so; vector is 400 index.no_embedder', async () => {
    expect(await ok(search(S, { query: 'dune' }))).toMatchObject({ mode: 'fts', vectorStatus: 'disabled' })
    expectError(await search(S, { query: 'dune', mode: 'vector' }), 400, 'index.no_embedder')
  })

  it('400 search.bad_mode, search.bad_scope; 400 request.invalid_field for other faults', async () => {
    expectError(await search(S, { query: 'x', mode: 'semantic' }), 400, 'search.bad_mode')
    expectError(await search(S, { query: 'x', scopes: ['Basic'] }), 400, 'search.bad_scope')
    expectError(await search(S, { query: 'x', scopes: ['a'.repeat(65)] }), 400, 'search.bad_scope')
    expectError(await search(S, { query: 'x', scopes: Array.from({ length: 65 }, (_, i) => `s${i}`) }), 400, 'search.bad_scope')
    expectError(await search(S, { query: 'x', limit: 0 }), 400, 'request.invalid_field')
    expectError(await search(S, {}), 400, 'request.missing_field')
    expectError(await call(b.app, 'POST', `/v1/spaces/nope/search`, { query: 'x' }), 404, 'space.not_found')
  })
})

describe('what is indexed: properties, named scopes, editor blocks, declared datasets', () => {
  let S: string
  let typeId: string
  let obj: string
  beforeAll(async () => {
    S = await newSpace(b.app, 'Scopes')
    typeId = (await ok(call(b.app, 'POST', `/v1/spaces/${S}/types`, { name: 'Gadget', xKey: 'gadget' }), 201)).id
    await ok(call(b.app, 'POST', `/v1/spaces/${S}/types/${typeId}/parts`, { key: 'body', datasets: [{ module: 'editor', shared: true }] }), 201)
    await ok(
      call(b.app, 'POST', `/v1/spaces/${S}/types/${typeId}/parts`, {
        key: 'log',
        datasets: [{ key: 'notes', search: ['line'], fields: { line: { type: 'string' }, secret: { type: 'string' } } }],
      }),
      201,
    )
    obj = await newObject(b.app, S, { types: [typeId], ...named('Widget') })
  })

  it('a property value is scope props by default, a named scope by meta.index, none when meta.index is none', async () => {
    const props = (await ok(call(b.app, 'POST', `/v1/spaces/${S}/types/${typeId}/properties`, { name: 'Maker', kind: 'string' }), 201)).propId
    const spec = (await ok(call(b.app, 'POST', `/v1/spaces/${S}/types/${typeId}/properties`, { name: 'Spec', kind: 'string', meta: { index: 'specs' } }), 201)).propId
    const hidden = (await ok(call(b.app, 'POST', `/v1/spaces/${S}/types/${typeId}/properties`, { name: 'Code', kind: 'string', meta: { index: 'none' } }), 201)).propId
    await ok(call(b.app, 'POST', `/v1/spaces/${S}/properties/${obj}/set/${typeId}`, { [props]: 'Acme Corporation', [spec]: 'titanium hinge', [hidden]: 'zebracode' }))
    expect(await hitsOf(S, { query: 'acme' })).toMatchObject([{ objectId: obj, scope: 'props' }])
    expect(await hitsOf(S, { query: 'titanium' })).toMatchObject([{ objectId: obj, scope: 'specs' }])
    expect(await hitsOf(S, { query: 'titanium', scopes: ['props'] })).toEqual([])
    expect(await hitsOf(S, { query: 'zebracode' })).toEqual([])
  })

  it('editor blocks are scope editor with the block id; a removed block leaves the index', async () => {
    const E = `/v1/spaces/${S}/objects/${obj}/editor/editor_blocks`
    await ok(call(b.app, 'PUT', `${E}/markdown`, { content: '# Manual\n\nTurn the flux capacitor gently.\n' }))
    const [hit] = await hitsOf(S, { query: 'capacitor' })
    expect(hit).toMatchObject({ objectId: obj, scope: 'editor', collection: 'editor_blocks' })
    expect(typeof hit.recordId).toBe('string')
    await ok(call(b.app, 'PUT', `${E}/markdown`, { content: '# Manual\n' }))
    expect(await hitsOf(S, { query: 'capacitor' })).toEqual([])
  })

  it('a declared dataset marked search indexes its named fields only (scope data)', async () => {
    const coll = `${typeId}_notes`
    const w = await ok(
      call(b.app, 'POST', `/v1/spaces/${S}/modify`, {
        objectId: obj,
        dataset: coll,
        records: [
          {
            id: 'n1',
            ops: [
              { type: '$set', path: 'line', value: 'calibrated gyroscope' },
              { type: '$set', path: 'secret', value: 'moonbase' },
            ],
          },
        ],
      }),
    )
    expect(await hitsOf(S, { query: 'gyroscope' })).toMatchObject([{ objectId: obj, scope: 'data', collection: coll, recordId: w.recordIds?.[0] ?? 'n1' }])
    expect(await hitsOf(S, { query: 'moonbase' })).toEqual([])
  })
})

describe('chat messages are scope chat', () => {
  it('a sent message is found with its message id; an edit and a delete follow', async () => {
    const S = await newSpace(b.app, 'Chat')
    await ok(call(b.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId: S }))
    const chat = bundleRootId(S, 'system:general-chat/v1')
    const M = `/v1/spaces/${S}/objects/${chat}/chat/messages`
    const sent = await ok(call(b.app, 'POST', M, { text: 'Meet at the **observatory** at nine' }), 201)
    const msgId = sent.recordIds[0]
    expect(await hitsOf(S, { query: 'observatory', scopes: ['chat'] })).toMatchObject([{ objectId: chat, scope: 'chat', collection: 'chat_messages', recordId: msgId }])
    await ok(call(b.app, 'PATCH', `${M}/${msgId}`, { text: 'Meet at the planetarium' }))
    expect(await hitsOf(S, { query: 'observatory' })).toEqual([])
    expect(await hitsOf(S, { query: 'planetarium' })).toHaveLength(1)
    await ok(call(b.app, 'DELETE', `${M}/${msgId}`))
    expect(await hitsOf(S, { query: 'planetarium' })).toEqual([])
  })
})

describe('index.disabled', () => {
  it('the indexDisabled setting turns indexing off (409 index.disabled); unsetting it rebuilds', async () => {
    const S = await newSpace(b.app, 'Off')
    const o = await newObject(b.app, S, named('Lighthouse'))
    await settings(S, { set: { indexDisabled: true } })
    await expect.poll(async () => (await search(S, { query: 'lighthouse' })).statusCode, { timeout: 10_000 }).toBe(409)
    expectError(await search(S, { query: 'lighthouse' }), 409, 'index.disabled')
    await settings(S, { unset: ['indexDisabled'] })
    await expect.poll(async () => (await search(S, { query: 'lighthouse' })).statusCode, { timeout: 10_000 }).toBe(200)
    expect((await hitsOf(S, { query: 'lighthouse' })).map((h) => h.objectId)).toEqual([o])
  })
})

describe('vector and hybrid with an embedder (a deterministic model on loopback)', () => {
  let S: string
  let car: string
  beforeAll(async () => {
    S = await newSpace(b.app, 'Vectors')
    car = await newObject(b.app, S, named('Red car', 'A fast red car for the city'))
    await newObject(b.app, S, named('Blue boat', 'Sails on the lake'))
    await settings(S, { set: { searchEmbedUrl: emb.url, searchEmbedModel: 'test-64' } })
    await b.engine.account().space(S).services.of(searchModule).vectors.idle()
  })

  it('vector finds a synonym full text misses; hybrid fuses both lists', async () => {
    await expect.poll(async () => (await ok(search(S, { query: 'automobile', mode: 'vector' }))).hits[0]?.objectId, { timeout: 10_000 }).toBe(car)
    expect(await hitsOf(S, { query: 'automobile' })).toEqual([])
    const v = await ok(search(S, { query: 'automobile', mode: 'vector' }))
    expect(v).toMatchObject({ mode: 'vector', vectorStatus: 'ready' })
    const h = await ok(search(S, { query: 'automobile city' }))
    expect(h.mode).toBe('hybrid')
    expect(h.hits[0].objectId).toBe(car)
  })

  it('embedder down: vector is 503 index.embedder_unavailable; hybrid degrades to fts with vectorStatus unavailable', async () => {
    emb.down = true
    try {
      expectError(await search(S, { query: 'car', mode: 'vector' }), 503, 'index.embedder_unavailable')
      expect(await ok(search(S, { query: 'car' }))).toMatchObject({ mode: 'fts', vectorStatus: 'unavailable', hits: [{ objectId: car }] })
    } finally {
      emb.down = false
    }
  })
})

describe('GET /v1/processes', () => {
  it('shows index.embed.<spaceId> with progress while a backfill runs past 3 s, and not after', { timeout: 60_000 }, async () => {
    const S = await newSpace(b.app, 'Slow model')
    for (let i = 0; i < 40; i++) await newObject(b.app, S, named(`Item ${i}`))
    // A search drains what is pending (the background drain waits for commits to pause).
    await ok(search(S, { query: 'item', mode: 'fts' }))
    let release!: () => void
    emb.hold = new Promise<void>((r) => (release = r))
    try {
      await settings(S, { set: { searchEmbedUrl: emb.url, searchEmbedModel: 'slow' } })
      const id = `index.embed.${S}`
      const listed = async () => ((await ok(call(b.app, 'GET', '/v1/processes'))).processes as any[]).find((p) => p.id === id)
      await expect.poll(listed, { timeout: 20_000, interval: 250 }).toMatchObject({ id, kind: 'index.embed', state: 'running', spaceId: S, progress: { done: 0 } })
      expect((await listed()).progress.total).toBeGreaterThanOrEqual(40)
      release()
      await expect.poll(listed, { timeout: 20_000, interval: 100 }).toBeUndefined()
    } finally {
      release()
      emb.hold = undefined
    }
  })
})

describe('$text in object queries uses the index', () => {
  it('word and prefix matching from the index, composed with other operators', async () => {
    const S = await newSpace(b.app, 'Text')
    const a = await newObject(b.app, S, named('Dragonfly lantern'))
    await newObject(b.app, S, named('Lantern battery'))
    const q = (filter: unknown) => ok(call(b.app, 'POST', `/v1/spaces/${S}/objects/query`, { filter, limit: 50 }))
    expect((await q({ $text: { $search: 'dragon lantern' } })).records.map((r: any) => r.id)).toEqual([a])
    // Substring scanning would match "rago" inside "Dragonfly"; the index matches words and prefixes.
    expect((await q({ $text: { $search: 'rago' } })).records).toEqual([])
    expect((await q({ $and: [{ $text: { $search: 'lantern' } }, { id: a }] })).records.map((r: any) => r.id)).toEqual([a])
    // A new name is matched at once (the row catches up before the filter runs).
    await ok(call(b.app, 'POST', `/v1/spaces/${S}/properties/${a}/set/core`, { name: 'Firefly' }))
    expect((await q({ $text: { $search: 'firefly' } })).records.map((r: any) => r.id)).toEqual([a])
  })
})
