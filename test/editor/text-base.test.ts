import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { mergeText } from '../../sync/modules/editor/text-merge.ts'
import { bootApp, call, newObject, newSpace, ok, type Booted } from '../routes/helpers.ts'

/*
 * Two people type into one paragraph through the HTTP API, each sending the whole text it
 * shows (the web app does). Each PATCH names the text it was typed against (`textBase`), so
 * the later one keeps what the earlier one typed instead of diffing it away.
 */
describe('mergeText', () => {
  it('keeps both sides’ insertions and both sides’ deletions', () => {
    expect(mergeText('Hello world', 'Hello big world', 'Hello world!')).toBe('Hello big world!')
    expect(mergeText('abc', 'ac', 'abcd')).toBe('acd')
    expect(mergeText('abc', 'abXc', 'abYc')).toBe('abYXc')
    expect(mergeText('same', 'same', 'other')).toBe('other')
  })

  it('an insertion on either side survives the merge', () => {
    fc.assert(
      fc.property(fc.string(), fc.nat(), fc.nat(), fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (base, i, j, a, b) => {
        const at = (n: number) => n % (base.length + 1)
        const mine = base.slice(0, at(i)) + a + base.slice(at(i))
        const theirs = base.slice(0, at(j)) + b + base.slice(at(j))
        const merged = mergeText(base, mine, theirs)
        expect(merged.length).toBe(base.length + a.length + b.length)
      }),
    )
  })
})

describe('PATCH /blocks/:blockId with textBase', () => {
  let b: Booted
  let E: string
  let blockId: string
  const text = async () => (await call(b.app, 'GET', `${E}/markdown`)).body.trim()

  beforeAll(async () => {
    b = await bootApp()
    const spaceId = await newSpace(b.app, 'Typing')
    const S = `/v1/spaces/${spaceId}`
    const docType = (await ok(call(b.app, 'POST', `${S}/types`, { name: 'Doc', xKey: 'doc' }), 201)).id as string
    await ok(call(b.app, 'POST', `${S}/types/${docType}/parts`, { key: 'body', datasets: [{ module: 'editor', shared: true }] }), 201)
    const obj = await newObject(b.app, spaceId, { types: [docType] })
    E = `${S}/objects/${obj}/editor/editor_blocks`
    blockId = (await ok(call(b.app, 'POST', `${E}/blocks`, { type: 'paragraph', text: 'Hello world' }), 201)).recordIds[0]
  }, 30_000)
  afterAll(async () => b?.close())

  it('two writers typed against the same text: both keep their words', async () => {
    await ok(call(b.app, 'PATCH', `${E}/blocks/${blockId}`, { set: { text: 'Hello big world' }, textBase: 'Hello world' }))
    await ok(call(b.app, 'PATCH', `${E}/blocks/${blockId}`, { set: { text: 'Hello world!' }, textBase: 'Hello world' }))
    expect(await text()).toBe('Hello big world!')
  })

  it('textBase without a text to merge is 400 request.invalid_field', async () => {
    const res = await call(b.app, 'PATCH', `${E}/blocks/${blockId}`, { set: { type: 'quote' }, textBase: 'x' })
    expect(res.statusCode).toBe(400)
    expect(res.json().error.code).toBe('request.invalid_field')
  })
})
