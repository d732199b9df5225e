import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, listen, type Booted } from '../routes/helpers.ts'
import { deliverJoins, exchange } from '../routes/sharing-helpers.ts'
import { linkMentions } from '../../server/cli/commands/chat-mentions.ts'
import { svcAt } from './helpers.ts'

/*
 * CLI commands that need a second account (issue 39 item 6): two daemons in one process, the
 * space's changes carried between them by `exchange` (what a head-sync round would carry).
 */
let a: Booted
let b: Booted
const urls: Record<'a' | 'b', string> = { a: '', b: '' }
let space: string
beforeAll(async () => {
  ;[a, b] = await Promise.all([bootApp(), bootApp()])
  urls.a = await listen(a.app)
  urls.b = await listen(b.app)
  space = (await svc('a', 'spaces', 'create', 'Shared')).out.trim()
  const { inviteToken } = (await svc('a', 'invite', 'create', space, '--permission', 'writer')).json()
  expect((await svc('b', 'join', inviteToken, '--name', 'Bea')).code).toBe(0)
  await deliverJoins(b, a, space)
  expect((await svc('a', 'members', 'accept', space, b.accountId)).code).toBe(0)
  await exchange(a, b, space)
}, 60_000)
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()])
})

const svc = (who: 'a' | 'b', ...args: string[]) => svcAt(urls[who], args)

describe('svc chat edit, delete, react, read and @mentions', () => {
  it('links @name to the member, reacts and un-reacts once, marks read, edits and deletes own messages only', async () => {
    expect((await svc('a', 'catalog', 'setup', 'general-chat', space)).code).toBe(0)
    const sent = await svc('a', 'chat', 'send', space, 'hi @bea, see @nobody')
    expect(sent.code).toBe(0)
    expect(sent.err).toBe('svc chat: no member is called @nobody; sent as text\n')
    const id = sent.json().recordIds[0] as string
    const plain = (await svc('a', 'chat', 'send', space, 'just @Bea', '--no-mentions')).json().recordIds[0] as string
    await exchange(a, b, space)
    const byId = async (who: 'a' | 'b', msg: string) => ((await svc(who, 'chat', 'list', space)).json().records as any[]).find((r) => r.id === msg)
    const got = await byId('b', id)
    expect(got).toMatchObject({ text: `hi [@Bea](svc://m/${space}/${b.accountId}), see @nobody`, mentions: [b.accountId], unread: true, unreadMention: true })
    expect((await byId('b', plain)).mentions).toBeUndefined()

    // read: this message and everything above it
    expect(await svc('b', 'chat', 'read', space, id)).toMatchObject({ code: 0, out: `marked read up to ${id}\n` })
    expect((await byId('b', id)).unread).toBeUndefined()
    expect((await byId('b', plain)).unread).toBe(true)
    expect(await svc('b', 'chat', 'read', space, '--all')).toMatchObject({ code: 0, out: 'marked the chat read\n' })
    expect((await byId('b', plain)).unread).toBeUndefined()
    expect((await svc('b', 'chat', 'read', space)).err).toContain('give MSG_ID or --all')

    // react: adds once, removes once; the toggle route is not called when nothing would change
    const reacted = await svc('b', 'chat', 'react', space, id, '👍')
    expect(reacted.code).toBe(0)
    expect(reacted.json().recordIds).toBeDefined()
    expect(Object.keys((await byId('b', id)).reactions['👍'])).toEqual([b.accountId])
    expect(await svc('b', 'chat', 'react', space, id, '👍')).toMatchObject({ code: 0, out: '', err: `svc chat: you already reacted 👍 to ${id}\n` })
    expect(Object.keys((await byId('b', id)).reactions['👍'])).toEqual([b.accountId])
    expect((await svc('b', 'chat', 'react', space, id, '👍', '--remove')).code).toBe(0)
    expect((await byId('b', id)).reactions?.['👍']?.[b.accountId]).toBeUndefined()
    expect(await svc('b', 'chat', 'react', space, id, '👍', '--remove')).toMatchObject({ code: 0, out: '', err: `svc chat: no 👍 of yours on ${id}; nothing to remove\n` })
    expect((await svc('b', 'chat', 'react', space, 'nope', '👍')).err).toContain('404 chat.not_found')
    expect((await svc('b', 'chat', 'react', space, id)).err).toContain('missing EMOJI')

    // edit and delete: own messages only (chat.not_author), mentions resolved on edit too
    const notMine = await svc('b', 'chat', 'edit', space, id, 'mine now')
    expect(notMine.code).toBe(1)
    expect(notMine.err).toContain('403 chat.not_author')
    expect((await svc('b', 'chat', 'delete', space, id)).err).toContain('403 chat.not_author')
    expect((await svc('a', 'chat', 'edit', space, id, 'edited for @"Bea"')).code).toBe(0)
    expect((await byId('a', id)).text).toBe(`edited for [@Bea](svc://m/${space}/${b.accountId})`)
    expect((await svc('a', 'chat', 'delete', space, plain)).code).toBe(0)
    expect(await byId('a', plain)).toBeUndefined()
    expect((await svc('a', 'chat', 'delete', space)).err).toContain('missing MSG_ID')
    expect((await svc('a', 'chat', 'delete', space, id, '--all')).err).toContain('--all is not an option of delete')
  })

  it('linkMentions: names ignore case and spaces, punctuation stays text, a shared name is refused', () => {
    const members = [
      { identity: 'idA', name: 'Bea Smith', status: 'active' },
      { identity: 'idB', name: 'Max', status: 'active' },
      { identity: 'idC', name: 'max', status: 'active' },
      { identity: 'idD', name: 'Gone', status: 'removed' },
    ]
    expect(linkMentions('@beasmith! and @idB. mail a@b.c [@Max](svc://m/s/idB) @Gone', 's', members)).toEqual({
      text: '[@Bea Smith](svc://m/s/idA)! and [@Max](svc://m/s/idB). mail a@b.c [@Max](svc://m/s/idB) @Gone',
      unknown: ['Gone'],
    })
    expect(() => linkMentions('hi @max', 's', members)).toThrow('@max names 2 members (idB, idC): write @IDENTITY instead')
  })
})

describe('a removed member', () => {
  it('sees "removed" in svc spaces, and its writes fail saying it was removed', async () => {
    expect((await svc('b', 'objects', 'create', space, '--name', 'Before')).code).toBe(0)
    // A reader is refused too, and told it cannot write, not that it was removed.
    expect((await svc('a', 'members', 'set', space, b.accountId, 'reader')).code).toBe(0)
    await exchange(a, b, space)
    const asReader = await svc('b', 'objects', 'create', space, '--name', 'Reader')
    expect(asReader.code).toBe(1)
    expect(asReader.err).toContain('403 space.read_only: this account cannot write in this space')
    expect((await svc('b', 'spaces')).out).toMatch(new RegExp(`^Shared\\s+reader\\s+active\\s+${space}$`, 'm'))
    expect((await svc('a', 'members', 'remove', space, b.accountId)).code).toBe(0)
    await exchange(a, b, space)
    const rows = await svc('b', 'spaces')
    expect(rows.out).toMatch(new RegExp(`^Shared\\s+none\\s+removed\\s+${space}$`, 'm'))
    expect(rows.out).not.toMatch(/none\s+active/)
    const write = await svc('b', 'objects', 'create', space, '--name', 'After')
    expect(write.code).toBe(1)
    expect(write.err).toContain('403 space.read_only')
    expect(write.err).toContain('removed from this space')
    const sent = await svc('b', 'chat', 'send', space, 'still here?')
    expect(sent.code).toBe(1)
    expect(sent.err).toContain('403 space.read_only: this account was removed from this space')
    expect((await svc('b', 'spaces', 'get', space, '--json')).json()).toMatchObject({ ownRole: 'none', status: 'active' })
  })
})
