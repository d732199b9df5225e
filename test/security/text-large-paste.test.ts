import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { checkUpdate, clientIdFor, fromB64, newDoc, textUpdate, YTEXT_ROOT, YTextField } from '../../sync/crdt/ytext.ts'
import { YTEXT_LIMITS } from '../../sync/crdt/ytext-limits.ts'
import { ownTextUpdates } from '../../sync/crdt/ytext-own-update.ts'
import { bootApp, call, newObject, newSpace, ok, type Booted } from '../routes/helpers.ts'

/*
 * Issue 33, item 8: a paste of more than 64 KiB into an existing block was refused (400
 * `request.invalid_field`, "the write cannot be stored: update") while a new block with the
 * same text was accepted. One Yjs update stays bounded for peers (YTEXT_LIMITS.maxUpdateBytes,
 * judged on every change received), so the daemon splits one local edit into several updates,
 * each under the bound, in one change.
 */

let b: Booted
let S: string
let spaceId: string
let docType: string
beforeAll(async () => {
  b = await bootApp()
  spaceId = await newSpace(b.app, 'Paste')
  S = `/v1/spaces/${spaceId}`
  docType = (await ok(call(b.app, 'POST', `${S}/types`, { name: 'Doc', xKey: 'doc' }), 201)).id as string
  await ok(call(b.app, 'POST', `${S}/types/${docType}/parts`, { key: 'body', datasets: [{ module: 'editor', shared: true }] }), 201)
})
afterAll(async () => b.close())

const blocks = async (obj: string) =>
  (await ok(call(b.app, 'POST', `${S}/query`, { objectId: obj, dataset: 'editor_blocks', sort: ['nav.pos'] }))).records as Array<{ id: string; text: string }>

/** Text of `n` UTF-16 units, mixing 1-, 2-, 3- and 4-byte UTF-8 characters and newlines. */
function pasteOf(n: number): string {
  const parts = ['word ', 'é', '中', '😀', '\n']
  let s = ''
  for (let i = 0; s.length < n; i++) s += parts[i % parts.length] + (i % 7)
  return s.slice(0, n).replace(/[\uD800-\uDBFF]$/, 'x')
}

describe('One local edit past the bound on one update', () => {
  it('is written as several updates of its writer, each within the bound that peers check, folding to the edit', () => {
    const client = clientIdFor('alice', 'a1')
    const first = textUpdate(undefined, 'start', 'start!', client)!
    const doc = newDoc()
    Y.applyUpdate(doc, first)
    const next = 'st' + pasteOf(200_000) + 'art!'
    const field = YTextField.holding({ l: 1, c: 'c', i: 0 }, doc)
    const updates = ownTextUpdates('t', field, 'start!', next, client)
    expect(updates).not.toBe('set')
    const list = updates as string[]
    expect(list.length).toBeGreaterThan(2)
    const peer = newDoc()
    Y.applyUpdate(peer, first)
    for (const u of list) {
      const bytes = fromB64(u)
      expect(bytes.length).toBeLessThanOrEqual(YTEXT_LIMITS.maxUpdateBytes)
      expect(checkUpdate(bytes, client)).toBe(true)
      Y.applyUpdate(peer, bytes)
    }
    expect(peer.getText(YTEXT_ROOT).toString()).toBe(next)
  })
})

describe('A paste into an existing block larger than one text update', () => {
  it('lands whole, up to the 1 MB body, and reads back byte for byte', async () => {
    const obj = await newObject(b.app, spaceId, { types: [docType] })
    const E = `${S}/objects/${obj}/editor/editor_blocks`
    const created = await ok(call(b.app, 'POST', `${E}/blocks`, { type: 'paragraph', text: 'start: ' }), 201)
    const id = created.recordIds[0] as string
    // Edit once first, so the block's text holds Yjs state (the seed) and the paste is an update.
    await ok(call(b.app, 'PATCH', `${E}/blocks/${id}`, { set: { text: 'start: x' } }))
    for (const size of [100_000, 300_000]) {
      expect(size * 2).toBeGreaterThan(YTEXT_LIMITS.maxUpdateBytes)
      const text = 'start: ' + pasteOf(size) + ' end'
      const res = await call(b.app, 'PATCH', `${E}/blocks/${id}`, { set: { text } })
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200)
      expect((await blocks(obj)).find((r) => r.id === id)?.text).toBe(text)
    }
    // A small edit after the big paste still merges as a character edit.
    const cur = (await blocks(obj)).find((r) => r.id === id)!.text
    await ok(call(b.app, 'PATCH', `${E}/blocks/${id}`, { set: { text: 'A' + cur } }))
    expect((await blocks(obj)).find((r) => r.id === id)?.text).toBe('A' + cur)
  })

  it('a block created with a text past the bound edits too (its seed cannot be cut: the edit is a plain set)', async () => {
    const obj = await newObject(b.app, spaceId, { types: [docType] })
    const E = `${S}/objects/${obj}/editor/editor_blocks`
    const big = pasteOf(100_000)
    const id = (await ok(call(b.app, 'POST', `${E}/blocks`, { type: 'paragraph', text: big }), 201)).recordIds[0] as string
    const res = await call(b.app, 'PATCH', `${E}/blocks/${id}`, { set: { text: big + ' more' } })
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200)
    expect((await blocks(obj)).find((r) => r.id === id)?.text).toBe(big + ' more')
  })
})
