import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleRootId } from '../../sync/space/bundles/model.ts'
import { call, ok } from '../routes/helpers.ts'
import { connectedPair, until, type P2PDaemon } from '../node/p2p-daemons.ts'

/*
 * Two accounts' daemons with real libp2p on loopback (no mDNS) share a space's general chat:
 * concurrent sends, edits and reaction toggles converge to the same messages on both, and a
 * forged edit of the other's message, written through the data plane, is dropped on both.
 */
let a: P2PDaemon
let b: P2PDaemon
let spaceId: string
let M: string
let chat: string
beforeAll(async () => {
  ;[a, b] = await connectedPair()
  spaceId = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Chat over the wire' }), 201)).id
  await ok(call(a.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId }))
  chat = bundleRootId(spaceId, 'system:general-chat/v1')
  M = `/v1/spaces/${spaceId}/objects/${chat}/chat/messages`
  await ok(call(a.app, 'POST', `/v1/spaces/${spaceId}/acl/add`, { identities: [b.accountId], permission: 'writer' }))
  await until('the invite_pending row', async () => (await ok(call(b.app, 'GET', '/v1/spaces?status=invite_pending'))).some((r: { id: string }) => r.id === spaceId))
  await call(b.app, 'POST', `/v1/spaces/${spaceId}/invite/accept`)
  await until('the chat root on b', async () => (await call(b.app, 'POST', M, { text: 'b is here' })).statusCode === 201)
}, 90_000)
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()])
})

/** The synced messages: read-state flags are each account's own (docs/chat.md "Read state"), so they are left out of the comparison. */
const messages = async (x: P2PDaemon) =>
  ((await ok(call(x.app, 'POST', `/v1/spaces/${spaceId}/query`, { objectId: chat, dataset: 'chat_messages', sort: ['_ver.id'], limit: 1000 }))).records as any[]).map(
    ({ unread: _u, unreadMention: _m, unreadReactions: _r, ...m }) => m,
  )
const send = async (x: P2PDaemon, text: string) => (await ok(call(x.app, 'POST', M, { text }), 201)).recordIds[0] as string

describe('chat between two daemons over libp2p', () => {
  it('concurrent sends, edits and reactions converge; a forged edit is dropped on both sides', async () => {
    const [fromA, fromB] = await Promise.all([Promise.all([0, 1, 2, 3].map((i) => send(a, `a${i}`))), Promise.all([0, 1, 2, 3].map((i) => send(b, `b${i}`)))])
    await until('every message on both', async () => (await messages(a)).length === 9 && (await messages(b)).length === 9)
    const thumbs = encodeURIComponent('👍')
    await Promise.all([
      ok(call(a.app, 'PATCH', `${M}/${fromA[0]}`, { text: 'a0 edited' })),
      ok(call(b.app, 'PATCH', `${M}/${fromB[0]}`, { text: 'b0 edited' })),
      // Both react to the same message at once, each into their own leaf.
      ok(call(a.app, 'POST', `${M}/${fromA[1]}/reactions/${thumbs}`)),
      ok(call(b.app, 'POST', `${M}/${fromA[1]}/reactions/${thumbs}`)),
      ok(call(b.app, 'DELETE', `${M}/${fromB[3]}`)),
    ])
    // A toggles its reaction off again while B's stays.
    await ok(call(a.app, 'POST', `${M}/${fromA[1]}/reactions/${thumbs}`))
    const forged = await ok(
      call(b.app, 'POST', `/v1/spaces/${spaceId}/modify`, {
        objectId: chat,
        dataset: 'chat_messages',
        records: [{ id: fromA[2], ops: [{ type: '$set', path: 'text', value: 'forged by b' }] }],
      }),
    )
    expect(forged.rejections?.[0]).toMatchObject({ recordId: fromA[2], code: 'merge.refused' })
    expect((await call(a.app, 'PATCH', `${M}/${fromB[1]}`, { text: 'not mine' })).json().error.code).toBe('chat.not_author')

    const final = await until(
      'both daemons agree',
      async () => {
        const [x, y] = await Promise.all([messages(a), messages(b)])
        return JSON.stringify(x) === JSON.stringify(y) &&
          x.length === 8 &&
          x.some((m) => m.text === 'b0 edited') &&
          x.some((m) => m.text === 'a0 edited') &&
          x.find((m) => m.id === fromA[1])?.reactions?.['👍']?.[b.accountId]
          ? x
          : undefined
      },
      30_000,
    )
    const byId = new Map(final.map((m) => [m.id, m]))
    expect(byId.get(fromA[2]).text).toBe('a2')
    expect(Object.keys(byId.get(fromA[1]).reactions['👍'])).toEqual([b.accountId])
    expect(byId.has(fromB[3])).toBe(false)
    expect(byId.get(fromB[0])).toMatchObject({ creator: b.accountId, text: 'b0 edited' })
  }, 60_000)
})
