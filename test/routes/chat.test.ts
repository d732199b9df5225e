import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleRootId } from '../../sync/space/bundles/model.ts'
import { idFor } from '../helpers.ts'
import { call, expectError, newObject, newSpace, ok, type Booted } from './helpers.ts'
import { bootAccount, exchange, offer } from './sharing-helpers.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'

/*
 * chat.md "Endpoints / Chat" (the write routes; read state has its own tests): send, edit,
 * delete, reaction toggle, with every rule of "Chat message", the Limits and the chat codes.
 * Two accounts share a space, so authorship is checked against a real other member's messages.
 */

let a: Booted
let b: Booted
let spaceId: string
let chat: string
let M: string
const msg = (id: string) => `${M}/${id}`

beforeAll(async () => {
  a = await bootAccount()
  b = await bootAccount()
  spaceId = await newSpace(a.app, 'Chat')
  await ok(call(a.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId }))
  chat = bundleRootId(spaceId, 'system:general-chat/v1')
  M = `/v1/spaces/${spaceId}/objects/${chat}/chat/messages`
  await ok(call(a.app, 'POST', `/v1/spaces/${spaceId}/acl/add`, { identities: [b.accountId], permission: 'writer' }))
  await offer(a, b, spaceId)
  await ok(call(b.app, 'POST', `/v1/spaces/${spaceId}/invite/accept`))
  await exchange(a, b, spaceId)
}, 60_000)
afterAll(async () => {
  await a?.close()
  await b?.close()
})

async function send(x: Booted, body: unknown): Promise<string> {
  const res = await ok<{ recordIds: string[]; changeId: string }>(call(x.app, 'POST', M, body), 201)
  expect(res.recordIds).toHaveLength(1)
  return res.recordIds[0]
}
async function get(x: Booted, id: string): Promise<any> {
  const res = await ok(call(x.app, 'POST', `/v1/spaces/${spaceId}/query`, { objectId: chat, dataset: 'chat_messages', filter: { id } }))
  return res.records[0]
}
const mention = (identity: string, space = spaceId) => `[@someone](svc://m/${space}/${identity})`

describe('POST {O}/chat/messages', () => {
  it('201 with the change-derived id; the server stamps creator and equal createdAt/modifiedAt', async () => {
    const res = await ok(call(a.app, 'POST', M, { text: 'hello **world**' }), 201)
    const doc = await get(a, res.recordIds[0])
    expect(doc).toMatchObject({ id: res.recordIds[0], text: 'hello **world**', creator: a.accountId })
    expect(doc.createdAt).toEqual(doc.modifiedAt)
    expect(doc.createdAt.$date).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(doc).not.toHaveProperty('mentions')
    expect(doc._ver.id).toMatch(/^\d{12}-/)
  })

  it('newer messages sort after older ones by _ver.id', async () => {
    const first = await send(a, { text: 'one' })
    const second = await send(a, { text: 'two' })
    const res = await ok(call(a.app, 'POST', `/v1/spaces/${spaceId}/query`, { objectId: chat, dataset: 'chat_messages', sort: ['-_ver.id'], limit: 2 }))
    expect(res.records.map((r: any) => r.id)).toEqual([second, first])
  })

  it("mentions: this space's links, deduped in first-occurrence order, plus the replied-to creator", async () => {
    const [x, y] = [idFor(11), idFor(12)]
    const id = await send(a, {
      text: `hi ${mention(x)} and ${mention(y)}, again ${mention(x)}; elsewhere ${mention(idFor(13), 'otherSpace')}; bad svc://m/${spaceId}/notAnIdentity`,
    })
    expect((await get(a, id)).mentions).toEqual([x, y])
    const fromB = await send(b, { text: 'from b' })
    await exchange(b, a, spaceId)
    const reply = await send(a, { text: `re ${mention(y)}`, replyToMessageId: fromB })
    expect(await get(a, reply)).toMatchObject({ replyToMessageId: fromB, mentions: [y, b.accountId] })
    // A reply to an unknown message is kept as a soft reference, with no fold-in.
    const dangling = await send(a, { text: 'x', replyToMessageId: 'no-such-message' })
    expect(await get(a, dangling)).toMatchObject({ replyToMessageId: 'no-such-message' })
    expect(await get(a, dangling)).not.toHaveProperty('mentions')
  })

  it('mentions are capped at 64 and the reply fold-in is always kept', async () => {
    const ids = Array.from({ length: 70 }, (_, i) => idFor(100 + i))
    const own = await send(a, { text: 'mine' })
    const id = await send(a, { text: ids.map((x) => mention(x)).join(' '), replyToMessageId: own })
    const m = (await get(a, id)).mentions
    expect(m).toHaveLength(64)
    expect(m).toEqual([...ids.slice(0, 63), a.accountId])
    const plain = await send(a, { text: ids.map((x) => mention(x)).join(' ') })
    expect((await get(a, plain)).mentions).toEqual(ids.slice(0, 64))
  })

  it('attachments without text; agent group; both stored as given', async () => {
    const attachments = { img1: { type: 'image', link: 'svc://f/space/file1' }, 'x_y-2': { type: 'future-kind', link: 'svc://f/space/file2' } }
    const agent = { name: 'helper', debugLink: `svc://${spaceId}/obj#step-3`, done: false }
    const id = await send(a, { attachments, agent })
    expect(await get(a, id)).toMatchObject({ attachments, agent })
    expect(await get(a, id)).not.toHaveProperty('text')
  })

  it('400 chat.text_required: neither text nor attachments', async () => {
    expectError(await call(a.app, 'POST', M, {}), 400, 'chat.text_required')
    expectError(await call(a.app, 'POST', M, { text: '' }), 400, 'chat.text_required')
    expectError(await call(a.app, 'POST', M, { text: '', attachments: {} }), 400, 'chat.text_required')
    expectError(await call(a.app, 'POST', M, { agent: { name: 'x', done: true } }), 400, 'chat.text_required')
  })

  it('400 chat.agent_invalid: a malformed agent group', async () => {
    for (const agent of [
      { name: 'x' },
      { done: true },
      { name: '', done: true },
      { name: 'x', done: 'yes' },
      { name: 'x', done: true, extra: 1 },
      { name: 'x', done: true, debugLink: 'https://example.com' },
      { name: '€'.repeat(100), done: true },
      'bot',
    ]) {
      expectError(await call(a.app, 'POST', M, { text: 'x', agent }), 400, 'chat.agent_invalid')
    }
  })

  it('limits: text 32 KiB in bytes, replyToMessageId 256 bytes, 32 attachments, attachment ids, links 2 KiB and shape', async () => {
    await send(a, { text: 'a'.repeat(32 * 1024) })
    expectError(await call(a.app, 'POST', M, { text: 'a'.repeat(32 * 1024 + 1) }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', M, { text: 'é'.repeat(17_000) }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', M, { text: 'x', replyToMessageId: 'é'.repeat(200) }), 400, 'request.invalid_field')
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`a${i}`, { type: 'link', link: `svc://f/s/f${i}` }]))
    expectError(await call(a.app, 'POST', M, { attachments: many }), 400, 'request.invalid_field')
    delete many.a32
    await send(a, { attachments: many })
    expectError(await call(a.app, 'POST', M, { attachments: { 'bad key': { type: 'link', link: 'svc://f/s/f' } } }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', M, { attachments: { k: { type: 'link', link: 'https://example.com/x' } } }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', M, { attachments: { k: { type: 'link', link: `svc://f/s/${'f'.repeat(2048)}` } } }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', M, { attachments: { k: { link: 'svc://f/s/f' } } }), 400, 'request.missing_field')
  })

  it('server-stamped and derived fields are read-only (400 request.invalid_field); unknown keys are 400 request.unknown_field', async () => {
    for (const field of ['creator', 'createdAt', 'modifiedAt', 'mentions', 'reactions', 'id', 'unread', 'unreadMention', 'unreadReactions']) {
      const res = await call(a.app, 'POST', M, { text: 'x', [field]: field === 'mentions' ? [a.accountId] : 'forged' })
      expectError(res, 400, 'request.invalid_field')
      expect(res.json().error.details).toEqual({ field, readOnly: true })
    }
    expectError(await call(a.app, 'POST', M, { text: 'x', color: 'red' }), 400, 'request.unknown_field')
  })

  it('404 for an unknown space or object; 404 dataset.not_found for an object that holds no chat', async () => {
    expectError(await call(a.app, 'POST', `/v1/spaces/nope/objects/${chat}/chat/messages`, { text: 'x' }), 404, 'space.not_found')
    expectError(await call(a.app, 'POST', `/v1/spaces/${spaceId}/objects/nope/chat/messages`, { text: 'x' }), 404, 'object.not_found')
    const plain = await newObject(a.app, spaceId)
    expectError(await call(a.app, 'POST', `/v1/spaces/${spaceId}/objects/${plain}/chat/messages`, { text: 'x' }), 404, 'dataset.not_found')
    const own = await send(a, { text: 'x' })
    expectError(await call(a.app, 'PATCH', `/v1/spaces/${spaceId}/objects/${plain}/chat/messages/${own}`, { text: 'y' }), 404, 'dataset.not_found')
  })
})

describe('PATCH and DELETE {O}/chat/messages/:msgId', () => {
  it('the author edits: text replaced, modifiedAt bumped, createdAt and _ver.id kept, mentions follow', async () => {
    const id = await send(a, { text: `hi ${mention(idFor(21))}` })
    const before = await get(a, id)
    await new Promise((r) => setTimeout(r, 5))
    const res = await ok(call(a.app, 'PATCH', msg(id), { text: `now ${mention(idFor(22))}` }))
    expect(res.changeId).toBeTruthy()
    const after = await get(a, id)
    expect(after).toMatchObject({ text: `now ${mention(idFor(22))}`, mentions: [idFor(22)], createdAt: before.createdAt, _ver: before._ver, creator: a.accountId })
    expect(after.modifiedAt.$date > before.modifiedAt.$date).toBe(true)
    await ok(call(a.app, 'PATCH', msg(id), { text: 'nobody' }))
    expect(await get(a, id)).not.toHaveProperty('mentions')
  })

  it('edit rules: text required (400 request.missing_field), read-only fields, create-only fields, empty text only with attachments', async () => {
    const id = await send(a, { text: 'x' })
    expectError(await call(a.app, 'PATCH', msg(id), {}), 400, 'request.missing_field')
    expectError(await call(a.app, 'PATCH', msg(id), { text: 'y', creator: b.accountId }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'PATCH', msg(id), { text: 'y', attachments: {} }), 400, 'request.unknown_field')
    expectError(await call(a.app, 'PATCH', msg(id), { text: 'y', agent: { name: 'x', done: true } }), 400, 'request.unknown_field')
    expectError(await call(a.app, 'PATCH', msg(id), { text: '' }), 400, 'chat.text_required')
    const withFile = await send(a, { text: 'caption', attachments: { f: { type: 'image', link: 'svc://f/s/f' } } })
    await ok(call(a.app, 'PATCH', msg(withFile), { text: '' }))
    expect(await get(a, withFile)).not.toHaveProperty('text')
  })

  it('the author deletes: the message is gone; a second delete or an edit is 404 chat.not_found', async () => {
    const id = await send(a, { text: 'bye' })
    const res = await ok(call(a.app, 'DELETE', msg(id)))
    expect(res.recordIds).toEqual([id])
    expect(await get(a, id)).toBeUndefined()
    expectError(await call(a.app, 'DELETE', msg(id)), 404, 'chat.not_found')
    expectError(await call(a.app, 'PATCH', msg(id), { text: 'x' }), 404, 'chat.not_found')
    expectError(await call(a.app, 'PATCH', msg('no-such-message'), { text: 'x' }), 404, 'chat.not_found')
    expectError(await call(a.app, 'DELETE', msg('no-such-message')), 404, 'chat.not_found')
  })

  it("403 chat.not_author on another member's message, on both sides", async () => {
    const mine = await send(a, { text: 'by a' })
    const theirs = await send(b, { text: 'by b' })
    await exchange(a, b, spaceId)
    await exchange(b, a, spaceId)
    expectError(await call(a.app, 'PATCH', msg(theirs), { text: 'x' }), 403, 'chat.not_author')
    expectError(await call(a.app, 'DELETE', msg(theirs)), 403, 'chat.not_author')
    expectError(await call(b.app, 'PATCH', msg(mine), { text: 'x' }), 403, 'chat.not_author')
    expectError(await call(b.app, 'DELETE', msg(mine)), 403, 'chat.not_author')
    expect((await get(a, theirs)).text).toBe('by b')
  })

  it('a forged edit and delete through the data plane are dropped on the forger and on the author', async () => {
    const mine = await send(a, { text: 'original' })
    await exchange(a, b, spaceId)
    const forged = await ok(
      call(b.app, 'POST', `/v1/spaces/${spaceId}/modify`, {
        objectId: chat,
        dataset: 'chat_messages',
        records: [{ id: mine, ops: [{ type: '$set', path: 'text', value: 'forged' }] }],
      }),
    )
    expect(forged.rejections).toEqual([expect.objectContaining({ recordId: mine, code: 'merge.refused' })])
    const del = await ok(call(b.app, 'POST', `/v1/spaces/${spaceId}/delete-records`, { objectId: chat, dataset: 'chat_messages', recordIds: [mine] }))
    expect(del.rejections).toEqual([expect.objectContaining({ recordId: mine, code: 'merge.refused' })])
    await exchange(b, a, spaceId)
    for (const x of [a, b]) expect(await get(x, mine)).toMatchObject({ text: 'original', creator: a.accountId })
  })
})

describe('POST {O}/chat/messages/:msgId/reactions/:emoji', () => {
  it("toggles the caller's own leaf; another member's leaf is untouched; emoji is a URL-encoded segment", async () => {
    const id = await send(a, { text: 'react to me' })
    const thumbs = encodeURIComponent('👍')
    await ok(call(a.app, 'POST', `${msg(id)}/reactions/${thumbs}`))
    const on = await get(a, id)
    expect(Object.keys(on.reactions['👍'])).toEqual([a.accountId])
    expect(on.reactions['👍'][a.accountId].$date).toMatch(/T/)
    expect(on.modifiedAt).toEqual(on.createdAt)
    await exchange(a, b, spaceId)
    await ok(call(b.app, 'POST', `${msg(id)}/reactions/${thumbs}`))
    await ok(call(b.app, 'POST', `${msg(id)}/reactions/${encodeURIComponent('🎉')}`))
    await exchange(b, a, spaceId)
    expect(Object.keys((await get(a, id)).reactions['👍']).sort()).toEqual([a.accountId, b.accountId].sort())
    // A's second toggle removes A's leaf only.
    await ok(call(a.app, 'POST', `${msg(id)}/reactions/${thumbs}`))
    const after = await get(a, id)
    expect(Object.keys(after.reactions['👍'])).toEqual([b.accountId])
    expect(Object.keys(after.reactions['🎉'])).toEqual([b.accountId])
  })

  it('400 for a reaction key with a dot, a space or over 64 bytes; 404 chat.not_found for an unknown or deleted message', async () => {
    const id = await send(a, { text: 'x' })
    for (const bad of ['a.b', 'a b', '😀'.repeat(17)]) expectError(await call(a.app, 'POST', `${msg(id)}/reactions/${encodeURIComponent(bad)}`), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', `${msg('no-such-message')}/reactions/x`), 404, 'chat.not_found')
    await ok(call(a.app, 'DELETE', msg(id)))
    expectError(await call(a.app, 'POST', `${msg(id)}/reactions/x`), 404, 'chat.not_found')
  })
})

describe('chat routes before an account is booted', () => {
  it('answer 401 auth.required, like every /v1 route', async () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-chat-'))
    const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
    const app = buildApp({ session: new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv }), engine })
    try {
      const O = '/v1/spaces/s/objects/o/chat/messages'
      expectError(await call(app, 'POST', O, { text: 'x' }), 401, 'auth.required')
      expectError(await call(app, 'PATCH', `${O}/m`, { text: 'x' }), 401, 'auth.required')
      expectError(await call(app, 'DELETE', `${O}/m`), 401, 'auth.required')
      expectError(await call(app, 'POST', `${O}/m/reactions/x`), 401, 'auth.required')
    } finally {
      await stopGracefully(app, 1000)
      rmSync(root, { recursive: true, force: true })
    }
  })
})

describe('chat and version history', () => {
  it('history routes never list chat changes', async () => {
    await send(a, { text: 'not in history' })
    const res = await ok(call(a.app, 'GET', `/v1/spaces/${spaceId}/objects/${chat}/history?limit=200`))
    const touched = (res.changes as Array<{ recordIds?: Array<{ dataset: string }> }>).flatMap((c) => c.recordIds ?? [])
    expect(touched.some((r) => r.dataset === 'chat_messages')).toBe(false)
  })
})

describe('a reader of the space', () => {
  it('cannot send, edit or react: 403 space.read_only', async () => {
    const mine = await send(b, { text: 'b wrote this as a writer' })
    const theirs = await send(a, { text: 'a message' })
    await exchange(b, a, spaceId)
    await ok(call(a.app, 'PATCH', `/v1/spaces/${spaceId}/members/${b.accountId}`, { role: 'reader' }), 204)
    await exchange(a, b, spaceId)
    expectError(await call(b.app, 'POST', M, { text: 'x' }), 403, 'space.read_only')
    expectError(await call(b.app, 'PATCH', msg(mine), { text: 'x' }), 403, 'space.read_only')
    expectError(await call(b.app, 'POST', `${msg(theirs)}/reactions/x`), 403, 'space.read_only')
  })
})
