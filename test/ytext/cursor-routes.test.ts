import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { editorModule } from '../../sync/modules/editor/module.ts'
import { eventsModule } from '../../sync/modules/events/module.ts'
import { ownerToken } from '../../sync/modules/events/namespace.ts'
import { bootApp, call, expectError, listen, newObject, newSpace, ok, openSse, type Booted, type SseClient } from '../routes/helpers.ts'

/**
 * Cursor routes (docs/editor.md "Cursors") over a real app: set, list, stream, clear, the
 * awareness encoding on the bus, and the timeout on the Env clock.
 */
let b: Booted
let base: string
let spaceId: string
let E: string
let obj: string
let blockId: string
const open: SseClient[] = []

beforeAll(async () => {
  b = await bootApp()
  base = await listen(b.app)
  spaceId = await newSpace(b.app, 'Cursors')
  const S = `/v1/spaces/${spaceId}`
  const docType = (await ok(call(b.app, 'POST', `${S}/types`, { name: 'Doc', xKey: 'doc' }), 201)).id as string
  await ok(call(b.app, 'POST', `${S}/types/${docType}/parts`, { key: 'body', datasets: [{ module: 'editor', shared: true }] }), 201)
  obj = await newObject(b.app, spaceId, { types: [docType] })
  E = `${S}/objects/${obj}/editor/editor_blocks`
  await ok(call(b.app, 'PUT', `${E}/markdown`, { content: 'Hello world.\n' }))
  blockId = ((await ok(call(b.app, 'POST', `${S}/query`, { objectId: obj, dataset: 'editor_blocks' }))).records as Array<{ id: string }>)[0].id
}, 30_000)
afterAll(async () => {
  for (const c of open) c.destroy()
  await b?.close()
})

describe('editor cursor routes', () => {
  it('PUT /cursor publishes a y-protocols awareness update in the sender namespace; GET /cursors lists it with indexes', async () => {
    const bus = b.engine.account().services.of(eventsModule)
    const seen: unknown[] = []
    const sub = bus.subscribe({ scopes: ['space'], spaceIds: [spaceId], types: ['editor.cursor.'] }, (e) => seen.push(e))
    const cur = await ok(call(b.app, 'PUT', `${E}/cursor`, { blockId, anchor: 6, head: 11, name: 'Ada' }))
    sub.close()
    expect(cur).toMatchObject({ self: true, name: 'Ada', blockId, anchor: { index: 6 }, head: { index: 11 } })
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ type: `editor.cursor.${ownerToken(b.engine.account().accountId)}`, scope: 'space', spaceId, target: obj })
    const list = await ok(call(b.app, 'GET', `${E}/cursors`))
    expect(list.cursors).toHaveLength(1)
    // The relative position is Yjs's: it decodes, and it follows its character when text is inserted before it.
    expect(Y.decodeRelativePosition(new Uint8Array(Buffer.from(list.cursors[0].anchor.rel, 'base64')))).toBeTruthy()
    await ok(call(b.app, 'PATCH', `${E}/markdown`, { edits: [{ oldText: 'Hello', newText: 'Oh hello there' }] }))
    const after = await ok(call(b.app, 'GET', `${E}/cursors`))
    expect(after.cursors[0].anchor.index).toBe(15)
    expect(after.cursors[0].head.index).toBe(20)
  })

  it('the stream sends the current list, then each change; DELETE /cursor removes it at once', async () => {
    await ok(call(b.app, 'PUT', `${E}/cursor`, { blockId, anchor: 1 }))
    const c = await openSse(`${base}${E}/cursors/stream`)
    open.push(c)
    await c.until((f) => f.some((x) => x.event === 'cursors'))
    expect((c.frames.find((f) => f.event === 'cursors')!.data as { cursors: unknown[] }).cursors).toHaveLength(1)
    await ok(call(b.app, 'PUT', `${E}/cursor`, { blockId, anchor: 3 }))
    await c.until((f) => f.some((x) => x.event === 'cursor' && x.data.action === 'set'))
    expect(await ok(call(b.app, 'DELETE', `${E}/cursor`))).toEqual({ cleared: true })
    await c.until((f) => f.some((x) => x.event === 'cursor' && x.data.action === 'removed'))
    expect((await ok(call(b.app, 'GET', `${E}/cursors`))).cursors).toEqual([])
    expect(await ok(call(b.app, 'DELETE', `${E}/cursor`))).toEqual({ cleared: false })
  })

  it('a cursor not renewed within the timeout is gone', async () => {
    const presence = b.engine.account().services.of(editorModule)
    const saved = presence.timeoutMs
    presence.timeoutMs = 200
    try {
      await ok(call(b.app, 'PUT', `${E}/cursor`, { blockId, anchor: 2 }))
      expect((await ok(call(b.app, 'GET', `${E}/cursors`))).cursors).toHaveLength(1)
      const deadline = Date.now() + 20_000
      let n = 1
      while (n > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50))
        n = (await ok(call(b.app, 'GET', `${E}/cursors`))).cursors.length
      }
      expect(n).toBe(0)
    } finally {
      presence.timeoutMs = saved
    }
  })

  it('bad input gets the error envelope: unknown block 404, bad index 400', async () => {
    expectError(await call(b.app, 'PUT', `${E}/cursor`, { blockId: 'nope', anchor: 0 }), 404, 'sdk.not_found')
    expectError(await call(b.app, 'PUT', `${E}/cursor`, { blockId, anchor: -1 }), 400, 'request.invalid_field')
  })
})
