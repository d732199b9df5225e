import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, newObject, newSpace, ok, type Booted } from './helpers.ts'

let b: Booted
let S: string
let spaceId: string
/** A type whose part declares the shared editor dataset: its objects may hold `editor_blocks`. */
let docType: string
beforeAll(async () => {
  b = await bootApp()
  spaceId = await newSpace(b.app, 'Editor')
  S = `/v1/spaces/${spaceId}`
  docType = (await ok(call(b.app, 'POST', `${S}/types`, { name: 'Doc', xKey: 'doc' }), 201)).id as string
  await ok(call(b.app, 'POST', `${S}/types/${docType}/parts`, { key: 'body', datasets: [{ module: 'editor', shared: true }] }), 201)
})
afterAll(async () => b.close())

const DOC = '# Title\n\nFirst paragraph with *emphasis*.\n\n- one\n- two\n  - nested\n\n```ts\nconst x = 1\n```\n\nLast paragraph.\n'

async function doc(): Promise<{ obj: string; E: string }> {
  const obj = await newObject(b.app, spaceId, { types: [docType] })
  return { obj, E: `${S}/objects/${obj}/editor/editor_blocks` }
}
/** GET /markdown as the spec answers it: the markdown text itself. */
const md = async (E: string): Promise<string> => {
  const res = await b.app.inject({ method: 'GET', url: `${E}/markdown` })
  expect(res.statusCode).toBe(200)
  expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8')
  return res.body
}
const blocks = async (obj: string, dataset = 'editor_blocks') => (await ok(call(b.app, 'POST', `${S}/query`, { objectId: obj, dataset, sort: ['nav.pos'] }))).records as any[]
const lastChange = async (obj: string, dataset = 'editor_blocks') => (await ok(call(b.app, 'GET', `${S}/objects/${obj}/history?dataset=${dataset}&limit=1`))).changes[0]

describe('editor markdown routes', () => {
  // fast-diff recurses without end on some pairs holding lone surrogates (a RangeError): the
  // edit must still land, as a whole-text replacement (sync/crdt/ytext.ts characterDiff).
  it('PUT lands an edit whose character diff cannot be computed', async () => {
    const { obj, E } = await doc()
    await ok(call(b.app, 'PUT', `${E}/markdown`, { content: 'a 😀 b\n' }))
    const res = await call(b.app, 'PUT', `${E}/markdown`, { content: 'a 😁\uDE00 b\n' })
    expect(res.statusCode).toBe(200)
    const after = await blocks(obj)
    expect(after).toHaveLength(1)
    expect(after[0].text.startsWith('a 😁')).toBe(true)
    expect(after[0].text.endsWith(' b')).toBe(true)
  })

  it('PUT then GET round-trips normalized markdown; an empty document is ""', async () => {
    const { obj, E } = await doc()
    expect(await md(E)).toBe('')
    const res = await ok(call(b.app, 'PUT', `${E}/markdown`, { content: DOC }))
    expect(res).toEqual({ inserted: 7, updated: 0, deleted: 0, unchanged: 0 })
    expect(await md(E)).toBe(DOC)
    expect(await blocks(obj)).toHaveLength(7)
    // non-normal input comes back normalized
    await ok(call(b.app, 'PUT', `${E}/markdown`, { content: 'Title\n=====\n\n* a\n* b' }))
    expect(await md(E)).toBe('# Title\n\n- a\n- b\n')
    // the same content again writes nothing
    const before = await lastChange(obj)
    expect(await ok(call(b.app, 'PUT', `${E}/markdown`, { content: '# Title\n\n- a\n- b\n' }))).toEqual({ inserted: 0, updated: 0, deleted: 0, unchanged: 3 })
    expect((await lastChange(obj)).version).toBe(before.version)
  })

  it('GET /markdown answers markdown text (spec); Accept: application/json gets the {markdown} extension', async () => {
    const { E } = await doc()
    await ok(call(b.app, 'PUT', `${E}/markdown`, { content: DOC }))
    for (const accept of [undefined, '*/*', 'text/markdown', 'text/plain', 'text/markdown, application/json']) {
      const res = await b.app.inject({ method: 'GET', url: `${E}/markdown`, headers: accept === undefined ? {} : { accept } })
      expect({ accept, status: res.statusCode, type: res.headers['content-type'], body: res.body }).toEqual({
        accept,
        status: 200,
        type: 'text/markdown; charset=utf-8',
        body: DOC,
      })
    }
    for (const accept of ['application/json', 'application/json; q=1, */*; q=0.1']) {
      const res = await b.app.inject({ method: 'GET', url: `${E}/markdown`, headers: { accept } })
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(res.json()).toEqual({ markdown: DOC })
    }
    // errors stay the JSON envelope
    const gone = await b.app.inject({ method: 'GET', url: `${S}/objects/nope/editor/editor_blocks/markdown` })
    expect(gone.statusCode).toBe(404)
    expect(gone.json().error.code).toBe('object.not_found')
  })

  it('PUT changing one block updates exactly that block in one change', async () => {
    const { obj, E } = await doc()
    await ok(call(b.app, 'PUT', `${E}/markdown`, { content: DOC }))
    const ids = (await blocks(obj)).map((r) => r.id)
    const res = await ok(call(b.app, 'PUT', `${E}/markdown`, { content: DOC.replace('Last paragraph.', 'Last paragraph, edited.') }))
    expect(res).toEqual({ inserted: 0, updated: 1, deleted: 0, unchanged: 6 })
    const change = await lastChange(obj)
    expect(change.recordIds).toEqual([{ dataset: 'editor_blocks', id: ids[6] }])
    expect(change.opCount).toBe(1)
    const after = await blocks(obj)
    expect(after.map((r) => r.id)).toEqual(ids)
    expect(after[6].text).toBe('Last paragraph, edited.')
    // deleting a block and inserting one
    const res2 = await ok(call(b.app, 'PUT', `${E}/markdown`, { content: '# Title\n\nNew para.\n\nFirst paragraph with *emphasis*.\n' }))
    expect(res2).toMatchObject({ inserted: 1, unchanged: 2 })
    expect(res2.deleted + res2.updated).toBeGreaterThanOrEqual(5)
    expect(await md(E)).toBe('# Title\n\nNew para.\n\nFirst paragraph with *emphasis*.\n')
  })

  it('PATCH applies exact-text edits (replaceAll too) and reports each error code', async () => {
    const { E } = await doc()
    await ok(call(b.app, 'PUT', `${E}/markdown`, { content: '# Plan\n\nalpha beta\n\nbeta gamma\n' }))
    expect(await ok(call(b.app, 'PATCH', `${E}/markdown`, { edits: [{ oldText: 'alpha', newText: 'ALPHA' }] }))).toEqual({ inserted: 0, updated: 1, deleted: 0, unchanged: 2 })
    expect(await md(E)).toBe('# Plan\n\nALPHA beta\n\nbeta gamma\n')
    expect(await ok(call(b.app, 'PATCH', `${E}/markdown`, { edits: [{ oldText: 'beta', newText: 'B', replaceAll: true }] }))).toMatchObject({ updated: 2 })
    expect(await md(E)).toBe('# Plan\n\nALPHA B\n\nB gamma\n')

    expect(
      expectError(
        await call(b.app, 'PATCH', `${E}/markdown`, {
          edits: [
            { oldText: 'Plan', newText: 'x' },
            { oldText: 'nope', newText: 'y' },
          ],
        }),
        400,
        'markdown.no_match',
      ),
    ).toMatchObject({ editIndex: 1 })
    expect(expectError(await call(b.app, 'PATCH', `${E}/markdown`, { edits: [{ oldText: 'B', newText: 'x' }] }), 400, 'markdown.ambiguous_match')).toMatchObject({
      editIndex: 0,
      occurrences: 2,
    })
    expect(
      expectError(
        await call(b.app, 'PATCH', `${E}/markdown`, {
          edits: [
            { oldText: 'ALPHA B', newText: 'x' },
            { oldText: 'HA', newText: 'y' },
          ],
        }),
        400,
        'markdown.overlapping_edits',
      ),
    ).toMatchObject({ editIndices: [0, 1] })
    expectError(await call(b.app, 'PATCH', `${E}/markdown`, { edits: [{ oldText: '', newText: 'y' }] }), 400, 'request.invalid_field')
    // all or nothing: nothing was written by the failed patches
    expect(await md(E)).toBe('# Plan\n\nALPHA B\n\nB gamma\n')
    expect((await call(b.app, 'PATCH', `${E}/markdown`, { edits: [{ oldText: 'a', newText: 'b', extra: 1 }] })).statusCode).toBe(400)
    expect((await call(b.app, 'PATCH', `${E}/markdown`, { edits: [] })).statusCode).toBe(400)
  })

  it('append inserts after the last block, no diff', async () => {
    const { obj, E } = await doc()
    await ok(call(b.app, 'PUT', `${E}/markdown`, { content: '# A\n\nbody\n' }))
    expect(await ok(call(b.app, 'POST', `${E}/markdown/append`, { content: '- x\n- y\n' }))).toEqual({ inserted: 2, updated: 0, deleted: 0, unchanged: 2 })
    expect(await md(E)).toBe('# A\n\nbody\n\n- x\n- y\n')
    const change = await lastChange(obj)
    expect(change.recordIds).toHaveLength(2)
    // appending onto an empty document
    const other = await doc()
    expect(await ok(call(b.app, 'POST', `${other.E}/markdown/append`, { content: 'hello' }))).toEqual({ inserted: 1, updated: 0, deleted: 0, unchanged: 0 })
    expect(await md(other.E)).toBe('hello\n')
    expect((await call(b.app, 'POST', `${E}/markdown/append`, { content: 'x', more: 1 })).statusCode).toBe(400)
    expect((await call(b.app, 'PUT', `${E}/markdown`, {})).statusCode).toBe(400)
  })
})

describe('editor block routes', () => {
  it('create, patch, delete blocks; write results; required type stays', async () => {
    const { obj, E } = await doc()
    await ok(call(b.app, 'PUT', `${E}/markdown`, { content: 'first\n' }))
    const created = await ok(call(b.app, 'POST', `${E}/blocks`, { type: 'heading', style: '2', text: 'Section' }), 201)
    expect(created).toMatchObject({ changeId: expect.any(String), versionId: expect.any(String), recordIds: [expect.any(String)] })
    const id = created.recordIds[0]
    expect(await md(E)).toBe('first\n\n## Section\n')
    const rec = (await blocks(obj)).find((r) => r.id === id)
    expect(rec).toMatchObject({ type: 'heading', style: '2', text: 'Section', nav: { pos: expect.any(String) } })

    // explicit position before everything
    const first = (await blocks(obj))[0]
    const top = await ok(call(b.app, 'POST', `${E}/blocks`, { type: 'paragraph', text: 'top', nav: { pos: 'Zz' } }), 201)
    expect(first.nav.pos > 'Zz').toBe(true)
    expect((await blocks(obj))[0].id).toBe(top.recordIds[0])
    expectError(await call(b.app, 'POST', `${E}/blocks`, { type: 'paragraph', nav: { pos: 'a0' + '0' } }), 400, 'request.invalid_field')
    expect((await call(b.app, 'POST', `${E}/blocks`, { type: 'paragraph', bogus: 1 })).statusCode).toBe(400)
    expect((await call(b.app, 'POST', `${E}/blocks`, { text: 'no type' })).statusCode).toBe(400)

    const patched = await ok(call(b.app, 'PATCH', `${E}/blocks/${id}`, { set: { text: 'Renamed', 'nav.depth': 0 }, unset: ['style'] }))
    expect(patched).toMatchObject({ recordIds: [id], changeId: expect.any(String) })
    expect((await blocks(obj)).find((r) => r.id === id)).toMatchObject({ type: 'heading', text: 'Renamed' })
    expect((await blocks(obj)).find((r) => r.id === id).style).toBeUndefined()
    expect(expectError(await call(b.app, 'PATCH', `${E}/blocks/${id}`, { unset: ['type'] }), 400, 'request.invalid_field')).toMatchObject({ path: 'type' })
    expectError(await call(b.app, 'PATCH', `${E}/blocks/${id}`, { set: { type: 5 } }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'PATCH', `${E}/blocks/${id}`, { set: { id: 'x' } }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'PATCH', `${E}/blocks/${id}`, {}), 400, 'request.missing_field')
    expectError(await call(b.app, 'PATCH', `${E}/blocks/nope`, { set: { text: 'x' } }), 404, 'sdk.not_found')
    expect((await call(b.app, 'PATCH', `${E}/blocks/${id}`, { set: { text: 'x' }, other: [] })).statusCode).toBe(400)

    const deleted = await ok(call(b.app, 'DELETE', `${E}/blocks/${id}`))
    expect(deleted).toMatchObject({ recordIds: [id], changeId: expect.any(String) })
    expect((await blocks(obj)).map((r) => r.id)).not.toContain(id)
    expect(await md(E)).toBe('top\n\nfirst\n')
    expectError(await call(b.app, 'DELETE', `${E}/blocks/${id}`), 404, 'sdk.not_found')
  })
})

describe('editor collections', () => {
  it('a part editor dataset needs a carried declaring type; non-editor collections are 404', async () => {
    const typeId = (await ok(call(b.app, 'POST', `${S}/types`, { name: 'Project', xKey: 'project' }), 201)).id as string
    const T = `${S}/types/${typeId}`
    const part = await ok(call(b.app, 'POST', `${T}/parts`, { key: 'notes', datasets: [{ module: 'editor' }] }), 201)
    const collection = part.datasets[0].collection as string
    expect(collection).toBe(`${typeId}_notes`)
    await ok(call(b.app, 'POST', `${T}/parts/${part.partId}/datasets`, { key: 'rows', fields: { a: { type: 'string' } } }), 201)

    const carrier = await newObject(b.app, spaceId, { types: [typeId] })
    const E = `${S}/objects/${carrier}/editor/${collection}`
    expect(await ok(call(b.app, 'PUT', `${E}/markdown`, { content: '# Notes\n\n- a\n' }))).toMatchObject({ inserted: 2 })
    expect(await md(E)).toBe('# Notes\n\n- a\n')
    expect(await blocks(carrier, collection)).toHaveLength(2)
    // Its type declares a part editor, not the shared one.
    expectError(await call(b.app, 'GET', `${S}/objects/${carrier}/editor/editor_blocks/markdown`), 400, 'dataset.not_declared')

    const plain = await newObject(b.app, spaceId)
    const P = `${S}/objects/${plain}/editor/${collection}`
    expectError(await call(b.app, 'GET', `${P}/markdown`), 400, 'dataset.not_declared')
    expectError(await call(b.app, 'PUT', `${P}/markdown`, { content: 'x' }), 400, 'dataset.not_declared')
    expectError(await call(b.app, 'POST', `${P}/blocks`, { type: 'paragraph' }), 400, 'dataset.not_declared')

    expectError(await call(b.app, 'GET', `${S}/objects/${carrier}/editor/${typeId}_rows/markdown`), 404, 'dataset.not_found')
    expectError(await call(b.app, 'GET', `${S}/objects/${carrier}/editor/notes/markdown`), 404, 'dataset.not_found')
    expectError(await call(b.app, 'PUT', `${S}/objects/${carrier}/editor/chat_messages/markdown`, { content: 'x' }), 404, 'dataset.not_found')
    expectError(await call(b.app, 'GET', `${S}/objects/nope/editor/editor_blocks/markdown`), 404, 'object.not_found')
  })

  it('editor_blocks on an object whose types declare no editor is 400 dataset.not_declared, not an empty document', async () => {
    const plain = await newObject(b.app, spaceId)
    const E = `${S}/objects/${plain}/editor/editor_blocks`
    const details = expectError(await call(b.app, 'GET', `${E}/markdown`), 400, 'dataset.not_declared')
    expect(details).toMatchObject({ dataset: 'editor_blocks', objectId: plain, owners: [docType] })
    expectError(await call(b.app, 'PUT', `${E}/markdown`, { content: '# x\n' }), 400, 'dataset.not_declared')
    expectError(await call(b.app, 'POST', `${E}/markdown/append`, { content: 'x' }), 400, 'dataset.not_declared')
    expectError(await call(b.app, 'POST', `${E}/blocks`, { type: 'paragraph', text: 'x' }), 400, 'dataset.not_declared')
    expect((await ok(call(b.app, 'POST', `${S}/query`, { objectId: plain, dataset: 'editor_blocks' }))).records).toEqual([])
  })
})
