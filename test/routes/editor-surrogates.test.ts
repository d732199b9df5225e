import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, newObject, newSpace, ok, type Booted } from './helpers.ts'

let b: Booted
let S: string
let spaceId: string
let docType: string
beforeAll(async () => {
  b = await bootApp()
  spaceId = await newSpace(b.app, 'Surrogates')
  S = `/v1/spaces/${spaceId}`
  docType = (await ok(call(b.app, 'POST', `${S}/types`, { name: 'Doc', xKey: 'doc' }), 201)).id as string
  await ok(call(b.app, 'POST', `${S}/types/${docType}/parts`, { key: 'body', datasets: [{ module: 'editor', shared: true }] }), 201)
})
afterAll(async () => b.close())

describe('editor text edits with lone surrogates', () => {
  // fast-diff recurses without end on some such pairs (a RangeError): the edit must still land.
  it('an edit whose character diff cannot be computed is written as a whole-text replacement', async () => {
    const obj = await newObject(b.app, spaceId, { types: [docType] })
    const E = `${S}/objects/${obj}/editor/editor_blocks`
    await ok(call(b.app, 'PUT', `${E}/markdown`, { content: 'a 😀 b\n' }))
    const res = await call(b.app, 'PUT', `${E}/markdown`, { content: 'a 😁\uDE00 b\n' })
    expect(res.statusCode).toBe(200)
    const after = (await ok(call(b.app, 'POST', `${S}/query`, { objectId: obj, dataset: 'editor_blocks' }))).records as Array<{ text: string }>
    expect(after).toHaveLength(1)
    expect(after[0].text.startsWith('a 😁')).toBe(true)
    expect(after[0].text.endsWith(' b')).toBe(true)
  })
})
