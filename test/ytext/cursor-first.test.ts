import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { Awareness, encodeAwarenessUpdate } from 'y-protocols/awareness'
import { eventsModule } from '../../sync/modules/events/module.ts'
import { ownerToken } from '../../sync/modules/events/namespace.ts'
import { idFor } from '../helpers.ts'
import { bootApp, call, newObject, newSpace, ok, type Booted } from '../routes/helpers.ts'

/**
 * Issue 39 item 8: an editor cursor reached the other device only from its second PUT /cursor,
 * because a device listened to a space's cursors only from its own first cursor route. Here
 * another member's first cursor update arrives over the bus (as node/p2p/events-network.ts
 * delivers it) before this device touched any cursor route, and is listed.
 */
let b: Booted
let spaceId: string
let E: string
let obj: string
let blockId: string

beforeAll(async () => {
  b = await bootApp()
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
  await b?.close()
})

describe('the first cursor another device sets', () => {
  it('is listed although this device had not asked for cursors before it arrived', async () => {
    const other = idFor(7)
    const aw = new Awareness(new Y.Doc())
    clearInterval(aw._checkInterval as ReturnType<typeof setInterval>)
    const rel = toB64(Y.encodeRelativePosition(Y.createRelativePositionFromTypeIndex(new Y.Doc().getText('t'), 0)))
    aw.setLocalState({ objectId: obj, collection: 'editor_blocks', blockId, anchor: rel, head: rel, name: 'Bob' })
    const bus = b.engine.account().services.of(eventsModule)
    const n = bus.deliverRemote(
      { type: `editor.cursor.${ownerToken(other)}`, scope: 'space', spaceId, target: obj, data: { update: toB64(encodeAwarenessUpdate(aw, [aw.clientID])) } },
      other,
    )
    aw.destroy()
    expect(n).toBeGreaterThan(0)
    const list = (await ok(call(b.app, 'GET', `${E}/cursors`))).cursors as Array<{ identity: string; name: string }>
    expect(list).toEqual([expect.objectContaining({ identity: other, name: 'Bob', self: false, blockId })])
  })
})

function toB64(u: Uint8Array): string {
  return Buffer.from(u).toString('base64')
}
