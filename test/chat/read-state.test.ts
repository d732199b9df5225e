import { describe, expect, it } from 'vitest'
import { compileQuery, runQuery } from '../../sync/query/index.ts'
import { CHAT_COLLECTION } from '../../sync/modules/chat/read-state/service.ts'
import type { SpaceChange, SpaceEngine } from '../../sync/space/space-engine.ts'
import { idFor } from '../helpers.ts'
import { expectCode } from '../space/helpers.ts'
import { edit, react, readState, send, threeMembers } from './read-state-helpers.ts'

const q = (space: SpaceEngine, chatId: string, body: { filter?: object; sort?: string[]; limit?: number }) =>
  space.datasetDocs(chatId, CHAT_COLLECTION).then((docs) => runQuery(docs, compileQuery(body)).records)
const counters = (space: SpaceEngine, chatId: string) => space.objectDoc(chatId)?.chat

describe('chat read state on one device', () => {
  it("another member's messages are unread, own ones born read; the chat row counts them", async () => {
    const { a, b, chatId, sync } = await threeMembers()
    const m1 = await send(b, chatId, 'one')
    const m2 = await send(b, chatId, 'two')
    const mine = await send(a, chatId, 'mine')
    await sync(a, b)
    const docs = await q(a, chatId, { sort: ['_ver.id'] })
    expect(Object.fromEntries(docs.map((d) => [d.id, d.unread]))).toEqual({ [m1]: true, [m2]: true, [mine]: undefined })
    expect(counters(a, chatId)).toEqual({ unreadCount: 2, unreadMentions: 0, unreadReactionsCount: 0 })
    // On the sender's side nothing is unread.
    expect(counters(b, chatId)).toMatchObject({ unreadCount: 1 })
    expect((await q(b, chatId, { filter: { unread: true } })).map((d) => d.id)).toEqual([mine])
    // First unread: filter {unread: true}, sort [_ver.id], limit 1.
    expect((await q(a, chatId, { filter: { unread: true }, sort: ['_ver.id'], limit: 1 })).map((d) => d.id)).toEqual([m1])
    expect((await q(a, chatId, { filter: { unread: true }, sort: ['-_ver.id'], limit: 1 })).map((d) => d.id)).toEqual([m2])
  })

  it('read marks this message and every held one above it; one written offline below a read one stays unread (two regions)', async () => {
    const { a, b, c, chatId, sync } = await threeMembers()
    const m1 = await send(b, chatId, 'one')
    await sync()
    // c is offline from here: its next message builds on m1 only, so it sorts below m2 and m3.
    const m2 = await send(b, chatId, 'two')
    const m3 = await send(b, chatId, 'three')
    const m4 = await send(b, chatId, 'four')
    await sync(a, b)
    await readState(a).read(chatId, m3)
    expect((await q(a, chatId, { filter: { unread: true } })).map((d) => d.id)).toEqual([m4])
    const late = await send(c, chatId, 'offline')
    await sync()
    const order = (await q(a, chatId, { sort: ['_ver.id'] })).map((d) => d.id)
    expect(order.indexOf(late)).toBeLessThan(order.indexOf(m3))
    expect((await q(a, chatId, { filter: { unread: true }, sort: ['_ver.id'] })).map((d) => d.id)).toEqual([late, m4])
    expect(counters(a, chatId)).toMatchObject({ unreadCount: 2 })
    // Read is idempotent and forward-only: reading m1 again changes nothing.
    await readState(a).read(chatId, m1)
    expect(counters(a, chatId)).toMatchObject({ unreadCount: 2 })
    expect(m2).toBeTruthy()
  })

  it('read-all reads every held message, is idempotent, and unknown ids and non-chat objects are refused', async () => {
    const { a, b, chatId, sync } = await threeMembers()
    for (let i = 0; i < 5; i++) await send(b, chatId, `m${i}`)
    await sync(a, b)
    await readState(a).readAll(chatId)
    expect(counters(a, chatId)).toEqual({ unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 })
    const marks = await a.services.account.list(`chatRead/${a.spaceId}/${chatId}`)
    expect(marks.length).toBe(5)
    await readState(a).readAll(chatId)
    expect((await a.services.account.list(`chatRead/${a.spaceId}/${chatId}`)).length).toBe(5)
    await expectCode(readState(a).read(chatId, 'nope'), 'chat.not_found')
    await expectCode(readState(a).reactionsRead(chatId, 'nope'), 'chat.not_found')
    await expectCode(readState(a).readAll(a.spaceIndexObjectId), 'dataset.not_found', { dataset: 'chat_messages' })
    await expectCode(readState(a).readAll('missing'), 'object.not_found')
  })

  it('edits never re-flag unread; an edit mentioning the account flags the mention again, and re-edits collapse into one', async () => {
    const { a, b, chatId, sync } = await threeMembers()
    const me = idFor(1)
    const m = await send(b, chatId, `hi svc://m/${a.spaceId}/${me}`, { mentions: [me] })
    const plain = await send(b, chatId, 'plain')
    await sync(a, b)
    expect(counters(a, chatId)).toEqual({ unreadCount: 2, unreadMentions: 1, unreadReactionsCount: 0 })
    expect((await q(a, chatId, { filter: { unreadMention: true } })).map((d) => d.id)).toEqual([m])
    await readState(a).readAll(chatId)
    expect(counters(a, chatId)).toEqual({ unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 })
    await edit(b, chatId, plain, 'plain, edited')
    await sync(a, b)
    expect(counters(a, chatId)).toMatchObject({ unreadCount: 0, unreadMentions: 0 })
    await edit(b, chatId, m, `hello again svc://m/${a.spaceId}/${me}`, [me])
    await edit(b, chatId, m, `and again svc://m/${a.spaceId}/${me}`, [me])
    await sync(a, b)
    expect(counters(a, chatId)).toEqual({ unreadCount: 0, unreadMentions: 1, unreadReactionsCount: 0 })
    expect((await q(a, chatId, { filter: { unreadMention: true } })).map((d) => [d.id, d.unread])).toEqual([[m, undefined]])
    // A self-mention lists the account but never badges.
    await send(a, chatId, `note to self svc://m/${a.spaceId}/${me}`, { mentions: [me] })
    expect(counters(a, chatId)).toMatchObject({ unreadMentions: 1 })
  })

  it('reactions of others on own messages flag them; one added and removed before viewing leaves no trace', async () => {
    const { a, b, c, chatId, sync } = await threeMembers()
    const mine = await send(a, chatId, 'react to me')
    await sync()
    await react(b, chatId, mine, '👍')
    await react(c, chatId, mine, '🎉')
    await react(c, chatId, mine, '🎉', false)
    await sync()
    expect(counters(a, chatId)).toMatchObject({ unreadReactionsCount: 1 })
    await react(b, chatId, mine, '👍', false)
    await sync()
    expect(counters(a, chatId)).toMatchObject({ unreadReactionsCount: 0 })
    expect((await q(a, chatId, { filter: { unreadReactions: true } })).length).toBe(0)
    // The account's own reaction never badges.
    await react(a, chatId, mine, '👀')
    expect(counters(a, chatId)).toMatchObject({ unreadReactionsCount: 0 })
  })

  it("reactions-read clears the flag and reads the unread messages in the reaction's causal past, not later ones", async () => {
    const { a, b, c, chatId, sync } = await threeMembers()
    const mine = await send(a, chatId, 'mine')
    await sync()
    const before = await send(c, chatId, 'before the reaction')
    await sync(b, c)
    await react(b, chatId, mine, '👍')
    const concurrent = await send(c, chatId, 'concurrent with the reaction')
    await sync()
    expect((await q(a, chatId, { filter: { unread: true }, sort: ['_ver.id'] })).map((d) => d.id).sort()).toEqual([before, concurrent].sort())
    expect((await q(a, chatId, { filter: { unreadReactions: true } })).map((d) => d.id)).toEqual([mine])
    await readState(a).reactionsRead(chatId, mine)
    expect((await q(a, chatId, { filter: { unreadReactions: true } })).length).toBe(0)
    expect((await q(a, chatId, { filter: { unread: true } })).map((d) => d.id)).toEqual([concurrent])
    expect(counters(a, chatId)).toEqual({ unreadCount: 1, unreadMentions: 0, unreadReactionsCount: 0 })
    // A reaction added later flags again.
    await react(c, chatId, mine, '🔥')
    await sync()
    expect(counters(a, chatId)).toMatchObject({ unreadReactionsCount: 1 })
  })

  it('counters appear with the first message even when nothing is unread (state loaded while the chat was empty)', async () => {
    const { a, chatId } = await threeMembers()
    expect(counters(a, chatId)).toBeUndefined()
    expect(await readState(a).counters(chatId)).toEqual({ unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 })
    await send(a, chatId, 'first, and mine')
    await readState(a).settled()
    expect(counters(a, chatId)).toEqual({ unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 })
  })

  it('a read announces the flags and counters that moved as a change (live windows frame it as updated)', async () => {
    const { a, b, chatId, sync } = await threeMembers()
    const m1 = await send(b, chatId, 'one')
    const m2 = await send(b, chatId, 'two')
    await sync(a, b)
    const seen: SpaceChange[] = []
    const off = a.events.on('change', (c) => seen.push(c))
    await readState(a).read(chatId, m1)
    off()
    const recs = seen.flatMap((c) => [...(c.records.get(chatId)?.get(CHAT_COLLECTION) ?? [])])
    expect(recs).toEqual([[m1, [{ type: '$unset', path: 'unread' }]]])
    const rows = seen.flatMap((c) => c.rowOps.get(chatId) ?? [])
    expect(rows).toEqual([{ type: '$set', path: 'chat.unreadCount', value: 1 }])
    expect(m2).toBeTruthy()
  })
})
