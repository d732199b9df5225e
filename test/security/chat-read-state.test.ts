import { describe, expect, it } from 'vitest'
import { CHANGE_DERIVED_ID } from '../../sync/crdt/ops.ts'
import { CHAT_COLLECTION } from '../../sync/modules/chat/read-state/service.ts'
import { CHAT_READ_PREFIX } from '../../sync/modules/chat/read-state/marks.ts'
import { edit, react, readState, send, threeMembers } from '../chat/read-state-helpers.ts'
import { idFor } from '../helpers.ts'

/**
 * Chat read state against hostile members (docs/security.md "Chat read state"): the flags and
 * counters are computed from the account's own marks, which live in its tech space; a member
 * can only write messages, edits and its own reactions into the shared space.
 */
describe('a member writes flag fields into a message record', () => {
  it("merge refuses them on every peer (chat's write rule), and the engine shows its own flags", async () => {
    const { a, b, chatId, sync } = await threeMembers()
    const now = { $date: new Date(b.env.now()).toISOString() }
    const forged = await b.write(chatId, [
      {
        op: 'set',
        ds: CHAT_COLLECTION,
        id: CHANGE_DERIVED_ID,
        path: '',
        value: { creator: b.replica.me, createdAt: now, modifiedAt: now, text: 'looks read', unread: false, unreadMention: true },
      },
    ])
    expect(forged.rejections?.map((r) => r.code)).toEqual(['merge.refused'])
    const n = await send(b, chatId, 'another')
    await sync(a, b)
    await readState(a).read(chatId, n)
    // Its own later op setting a flag back on the message is refused too.
    const again = await b.write(chatId, [{ op: 'set', ds: CHAT_COLLECTION, id: n, path: 'unread', value: true }])
    expect(again.rejections?.map((r) => r.code)).toEqual(['merge.refused'])
    await sync(a, b)
    const docs = await a.datasetDocs(chatId, CHAT_COLLECTION)
    expect(docs.map((d) => d.id)).toEqual([n])
    expect(docs[0]).not.toHaveProperty('unread')
    expect(a.objectDoc(chatId)?.chat).toEqual({ unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 })
  })
})

describe("a member looks for the account's read state", () => {
  it('reading writes nothing into the shared space: members never learn what the account read', async () => {
    const { a, b, chatId, sync } = await threeMembers()
    const m = await send(b, chatId, `hey svc://m/x/${idFor(1)}`, { mentions: [idFor(1)] })
    await sync(a, b)
    const before = (await b.replica.allChanges()).length
    await readState(a).readAll(chatId)
    await readState(a).read(chatId, m)
    await sync(a, b)
    expect((await b.replica.allChanges()).length).toBe(before)
    expect(await a.services.account.list(`${CHAT_READ_PREFIX}/${a.spaceId}/${chatId}`)).not.toEqual([])
    for (const t of b.replica.treeIds()) expect(await b.replica.listRecords(t, `${CHAT_READ_PREFIX}/${a.spaceId}/${chatId}`)).toEqual([])
  })
})

describe('a member churns edits and reactions to make the account badge forever', () => {
  it('each view settles it: a re-added reaction or a re-edit flags once, and reading clears it', async () => {
    const { a, b, chatId, sync } = await threeMembers()
    const mine = await send(a, chatId, 'mine')
    const theirs = await send(b, chatId, `hi svc://m/x/${idFor(1)}`, { mentions: [idFor(1)] })
    await sync(a, b)
    for (let i = 0; i < 20; i++) {
      await react(b, chatId, mine, '👍', i % 2 === 0)
      await edit(b, chatId, theirs, `hi ${i} svc://m/x/${idFor(1)}`, [idFor(1)])
    }
    await sync(a, b)
    expect(a.objectDoc(chatId)?.chat).toEqual({ unreadCount: 1, unreadMentions: 1, unreadReactionsCount: 0 })
    await readState(a).readAll(chatId)
    expect(a.objectDoc(chatId)?.chat).toEqual({ unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 })
    // Marks grow by what the account viewed, never by what the member churned.
    const marks = await a.services.account.list(`${CHAT_READ_PREFIX}/${a.spaceId}/${chatId}`)
    expect(marks.length).toBe(1)
  })
})
