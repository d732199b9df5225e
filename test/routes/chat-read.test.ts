import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { CHAT_COLLECTION } from '../../sync/modules/chat/read-state/service.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'
import { readState, react, send } from '../chat/read-state-helpers.ts'
import { bootApp, call, expectError, listen, newObject, newSpace, ok, openSse, type Booted, type Frame } from './helpers.ts'

let b: Booted
let base: string
let spaceId: string
let S: string
let chatId: string
let O: string
/** Another member (account 2) writing in the same space, in this process. */
let other: SpaceEngine

beforeAll(async () => {
  b = await bootApp()
  base = await listen(b.app)
  spaceId = await newSpace(b.app)
  S = `/v1/spaces/${spaceId}`
  const setup = await ok(call(b.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId }))
  chatId = setup.bundles[0].bundle.rootId
  O = `${S}/objects/${chatId}`
  const mine = b.engine.account().space(spaceId)
  await mine.replica.addMember(idFor(2), 'writer')
  other = await SpaceEngine.open(await deps(2), spaceId, keyFor(2), { modules: DEFAULT_MODULES })
  await sync()
})
afterAll(() => b.close())

/** Both ways between the daemon's replica and the other member's; readable on both once it resolves. */
async function sync() {
  const mine = b.engine.account().space(spaceId)
  await pushAll(mine.replica, other.replica)
  await pushAll(other.replica, mine.replica)
  await mine.settled()
  await other.settled()
  await readState(mine).settled()
  await readState(other).settled()
}

async function fromOther(text: string, extra: Record<string, unknown> = {}): Promise<string> {
  const id = await send(other, chatId, text, extra as never)
  await sync()
  return id
}

const query = (body: object) => ok(call(b.app, 'POST', `${S}/query`, { objectId: chatId, dataset: CHAT_COLLECTION, ...body }))
const chatRow = async () => (await ok(call(b.app, 'POST', `${S}/objects/query`, { filter: { id: chatId } }))).records[0]
const changes = (frames: Frame[]) => frames.filter((f) => f.event === 'changes').flatMap((f) => f.data as Array<Record<string, any>>)

describe('chat read routes', () => {
  it('read, read-all and reactions-read answer 204 and are idempotent; unknown ids and non-chat objects are 404', async () => {
    const m = await fromOther('hello')
    for (let i = 0; i < 2; i++) {
      await ok(call(b.app, 'POST', `${O}/chat/messages/${m}/read`), 204)
      await ok(call(b.app, 'POST', `${O}/chat/read-all`), 204)
      await ok(call(b.app, 'POST', `${O}/chat/messages/${m}/reactions-read`), 204)
    }
    expectError(await call(b.app, 'POST', `${O}/chat/messages/nope/read`), 404, 'chat.not_found')
    expectError(await call(b.app, 'POST', `${O}/chat/messages/nope/reactions-read`), 404, 'chat.not_found')
    const plain = await newObject(b.app, spaceId, {})
    expectError(await call(b.app, 'POST', `${S}/objects/${plain}/chat/read-all`), 404, 'dataset.not_found')
    expectError(await call(b.app, 'POST', `${S}/objects/missing/chat/read-all`), 404, 'object.not_found')
    expectError(await call(b.app, 'POST', `/v1/spaces/nospace/objects/${chatId}/chat/read-all`), 404, 'space.not_found')
  })

  it('queries see the flags: first unread, my unread mentions, my mentions; the chat row carries the counters', async () => {
    await ok(call(b.app, 'POST', `${O}/chat/read-all`), 204)
    const me = b.accountId
    const m1 = await fromOther('one')
    const m2 = await fromOther(`hey svc://m/${spaceId}/${me}`, { mentions: [me] })
    await fromOther('three')
    expect((await query({ filter: { unread: true }, sort: ['_ver.id'], limit: 1 })).records.map((r: any) => r.id)).toEqual([m1])
    expect((await query({ filter: { unreadMention: true }, sort: ['_ver.id'] })).records.map((r: any) => r.id)).toEqual([m2])
    expect((await query({ filter: { mentions: me }, sort: ['-_ver.id'] })).records.map((r: any) => r.id)).toEqual([m2])
    expect((await chatRow()).chat).toEqual({ unreadCount: 3, unreadMentions: 1, unreadReactionsCount: 0 })
    await ok(call(b.app, 'POST', `${O}/chat/messages/${m2}/read`), 204)
    expect((await query({ filter: { unread: true } })).records.length).toBe(1)
    expect((await chatRow()).chat).toEqual({ unreadCount: 1, unreadMentions: 0, unreadReactionsCount: 0 })
  })

  it('reactions on own messages flag them until reactions-read', async () => {
    const mine = b.engine.account().space(spaceId)
    const own = await send(mine, chatId, 'mine')
    await sync()
    await react(other, chatId, own, '👍')
    await sync()
    expect((await query({ filter: { unreadReactions: true } })).records.map((r: any) => r.id)).toEqual([own])
    expect((await chatRow()).chat.unreadReactionsCount).toBe(1)
    await ok(call(b.app, 'POST', `${O}/chat/messages/${own}/reactions-read`), 204)
    expect((await query({ filter: { unreadReactions: true } })).records).toEqual([])
    expect((await chatRow()).chat.unreadReactionsCount).toBe(0)
  })

  it('the chat list sorts by -chat.unreadCount; a live objects subscription frames counters rising and dropping', async () => {
    await ok(call(b.app, 'POST', `${O}/chat/read-all`), 204)
    const s = await openSse(`${base}${S}/objects/query/subscribe`, { filter: { id: chatId }, sort: ['-chat.unreadCount'], limit: 10 })
    try {
      await s.until((f) => f.length >= 2)
      expect(s.frames[1].data.records[0].chat).toMatchObject({ unreadCount: 0 })
      await fromOther('new one')
      await s.until((f) => changes(f).some((c) => c.updated.some((u: any) => u.doc.chat?.unreadCount === 1)))
      await ok(call(b.app, 'POST', `${O}/chat/read-all`), 204)
      const frames = await s.until((f) => changes(f).some((c) => c.updated.some((u: any) => u.doc.chat?.unreadCount === 0)))
      const drop = changes(frames)
        .flatMap((c) => c.updated)
        .find((u: any) => u.doc.chat?.unreadCount === 0)
      expect(drop.ops).toEqual([{ type: '$set', path: 'chat.unreadCount', value: 0 }])
    } finally {
      s.destroy()
    }
    const plain = await newObject(b.app, spaceId, { initialProperties: { core: { name: 'not a chat' } } })
    await fromOther('unread again')
    const list = await ok(call(b.app, 'POST', `${S}/objects/query`, { filter: { id: { $in: [chatId, plain] } }, sort: ['-chat.unreadCount'] }))
    expect(list.records.map((r: any) => r.id)).toEqual([chatId, plain])
    expect(list.records[1].chat).toBeUndefined()
  })

  it('a live window of messages gets an updated frame when a flag clears', async () => {
    const m = await fromOther('watch me')
    const s = await openSse(`${base}${S}/query/subscribe`, { objectId: chatId, dataset: CHAT_COLLECTION, sort: ['-_ver.id'], limit: 5 })
    try {
      await s.until((f) => f.length >= 2)
      expect(s.frames[1].data.records[0]).toMatchObject({ id: m, unread: true })
      await ok(call(b.app, 'POST', `${O}/chat/messages/${m}/read`), 204)
      const frames = await s.until((f) => changes(f).some((c) => c.updated.some((u: any) => u.id === m)))
      const upd = changes(frames)
        .flatMap((c) => c.updated)
        .find((u: any) => u.id === m)
      expect(upd.doc.unread).toBeUndefined()
      expect(upd.ops).toEqual([{ type: '$unset', path: 'unread' }])
    } finally {
      s.destroy()
    }
  })

  it('clients cannot write flags or counters; chat.notifyMode is an account-scope value set through the properties route', async () => {
    const m = await fromOther('flag me')
    const res = await ok(
      call(b.app, 'POST', `${S}/modify`, { objectId: chatId, dataset: CHAT_COLLECTION, records: [{ id: m, ops: [{ type: '$set', path: 'unread', value: false }] }] }),
    )
    expect(res.rejections).toEqual([expect.objectContaining({ recordId: m, index: 0, code: 'upsert.rejected' })])
    expect((await query({ filter: { id: m } })).records[0].unread).toBe(true)
    expect(expectError(await call(b.app, 'POST', `${S}/properties/${chatId}/set/chat`, { unreadCount: 0 }), 400, 'property.immutable')).toEqual({ path: 'chat.unreadCount' })
    expectError(await call(b.app, 'POST', `${S}/properties/${chatId}/set/chat`, { notifyMode: 'loud' }), 400, 'property.format_violation')
    expectError(await call(b.app, 'POST', `${S}/properties/${chatId}/set/chat`, { nope: 1 }), 404, 'property.not_found')
    const plain = await newObject(b.app, spaceId, {})
    expectError(await call(b.app, 'POST', `${S}/properties/${plain}/set/chat`, { notifyMode: 'all' }), 400, 'object.type_required')
    const set = await ok(call(b.app, 'POST', `${S}/properties/${chatId}/set/chat`, { notifyMode: 'mentions' }))
    expect(set.scoped).toEqual({ account: ['notifyMode'] })
    const row = await chatRow()
    expect(row.chat).toMatchObject({ notifyMode: 'mentions', unreadCount: expect.any(Number) })
    // Account scope: a tech-space value, never a change of the shared space.
    expect(JSON.stringify(await other.replica.getRecord(chatId, '', ''))).not.toContain('mentions')
    await ok(call(b.app, 'POST', `${S}/properties/${chatId}/set/chat`, { notifyMode: null }))
    expect((await chatRow()).chat.notifyMode).toBeUndefined()
  })
})
