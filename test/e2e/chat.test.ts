/**
 * Issue 14, "How it is proven", end to end: real daemons of two accounts sharing a space over
 * mDNS (inside scripts/netns-run.sh only), plus a second device of one account and a guest.
 * Concurrent sends, edits and reaction toggles converge; a forged edit of another's message is
 * dropped everywhere; unread counters and mention flags are right on each side; reading on one
 * device of an account clears the flags on its other device; a `space` event reaches the other
 * account's subscriber, and a guest is refused.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { AccountDevice } from './account-device.ts'
import { Fleet, inviteAndAccept, p2pAddress, S, type Account } from './accounts.ts'
import { api, IN_NETNS, ok, startDaemon, until } from './daemons.ts'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const fleet = new Fleet()
afterAll(() => fleet.close())

const C = (spaceId: string, chatId: string) => `${S(spaceId)}/objects/${encodeURIComponent(chatId)}/chat`
const mention = (spaceId: string, a: Account) => `svc://m/${spaceId}/${a.identity}`

/** Installs (or adopts) the space's general chat; its root id is the same on every device. */
async function generalChat(a: Account, spaceId: string): Promise<string> {
  const r = await ok(a.d, 'POST', '/v1/catalog/general-chat/setup', { spaceId })
  return r.bundles.find((b: any) => b.id === 'system:general-chat/v1').bundle.rootId
}

const send = async (a: Account, spaceId: string, chatId: string, body: Record<string, unknown>): Promise<string> =>
  (await ok(a.d, 'POST', `${C(spaceId, chatId)}/messages`, body)).recordIds[0]

/** Every message `a` holds, oldest first. */
async function messages(a: Account, spaceId: string, chatId: string): Promise<any[]> {
  return (await ok(a.d, 'POST', `${S(spaceId)}/query`, { objectId: chatId, dataset: 'chat_messages', sort: ['_ver.id'], limit: 1000 })).records
}

/** The synced part of a message: what every member must hold alike. */
const synced = ({ unread: _u, unreadMention: _m, unreadReactions: _r, ...rest }: any) => rest

/** The chat row's counters as `a` sees them (absent counts as 0). */
async function counters(a: Account, spaceId: string, chatId: string) {
  const rows = (await ok(a.d, 'POST', `${S(spaceId)}/objects/query`, { filter: { id: chatId }, limit: 1 })).records
  const chat = rows[0]?.chat ?? {}
  return { unread: chat.unreadCount ?? 0, mentions: chat.unreadMentions ?? 0, reactions: chat.unreadReactionsCount ?? 0 }
}

const sameMessages = (accounts: Account[], spaceId: string, chatId: string, n: number) =>
  until(
    `${accounts.map((a) => a.name).join(' and ')} hold the same ${n} messages`,
    async () => {
      const held = await Promise.all(accounts.map(async (a) => (await messages(a, spaceId, chatId)).map(synced)))
      if (held.some((h) => h.length !== n)) return false
      return held.every((h) => JSON.stringify(h) === JSON.stringify(held[0])) ? held[0] : false
    },
    60_000,
    200,
  )

/** The accounts and the shared space's general chat every step below works in. */
interface ChatScene {
  alice: Account
  bob: Account
  guest: Account
  spaceId: string
  chat: string
}

/** Alice's space with Bob as a writer and a guest; Bob's install adopts the same chat. */
async function openScene(): Promise<ChatScene> {
  const [alice, bob, guest] = await Promise.all(['alice', 'bob', 'guest'].map((n) => fleet.account(n)))
  const space = await ok(alice.d, 'POST', '/v1/spaces', { name: 'Team' })
  const chat = await generalChat(alice, space.id)
  await inviteAndAccept(alice, space.id, bob, 'writer')
  await inviteAndAccept(alice, space.id, guest, 'guest')
  expect(await generalChat(bob, space.id)).toBe(chat)
  return { alice, bob, guest, spaceId: space.id, chat }
}

/** Concurrent sends from both sides, then concurrent edits and reaction toggles; returns each side's message ids. */
async function sendsEditsAndReactionsConverge({ alice, bob, spaceId, chat }: ChatScene) {
  const [fromAlice, fromBob] = await Promise.all([
    Promise.all([1, 2, 3].map((i) => send(alice, spaceId, chat, { text: `alice ${i}` }))),
    Promise.all([1, 2, 3].map((i) => send(bob, spaceId, chat, { text: `bob ${i}` }))),
  ])
  await sameMessages([alice, bob], spaceId, chat, 6)

  // Concurrent edits of own messages and reaction toggles on each other's.
  await Promise.all([
    ok(alice.d, 'PATCH', `${C(spaceId, chat)}/messages/${fromAlice[0]}`, { text: 'alice 1, edited' }),
    ok(bob.d, 'PATCH', `${C(spaceId, chat)}/messages/${fromBob[0]}`, { text: 'bob 1, edited' }),
    ok(alice.d, 'POST', `${C(spaceId, chat)}/messages/${fromBob[1]}/reactions/${encodeURIComponent('👍')}`),
    ok(bob.d, 'POST', `${C(spaceId, chat)}/messages/${fromBob[1]}/reactions/${encodeURIComponent('👍')}`),
    ok(bob.d, 'POST', `${C(spaceId, chat)}/messages/${fromAlice[1]}/reactions/${encodeURIComponent('🎉')}`),
  ])
  // Bob toggles his 🎉 off and back on: one leaf, his own.
  for (let i = 0; i < 2; i++) await ok(bob.d, 'POST', `${C(spaceId, chat)}/messages/${fromAlice[1]}/reactions/${encodeURIComponent('🎉')}`)
  const converged = await until('edits and reactions converge', async () => {
    const all = await sameMessages([alice, bob], spaceId, chat, 6)
    const byId = new Map(all.map((m: any) => [m.id, m]))
    const ok1 = byId.get(fromAlice[0]).text === 'alice 1, edited' && byId.get(fromBob[0]).text === 'bob 1, edited'
    const thumbs = byId.get(fromBob[1]).reactions?.['👍'] ?? {}
    const party = byId.get(fromAlice[1]).reactions?.['🎉'] ?? {}
    return ok1 && thumbs[alice.identity] && thumbs[bob.identity] && party[bob.identity] ? byId : false
  })
  expect(converged.get(fromAlice[0]).creator).toBe(alice.identity)
  expect(converged.get(fromBob[0]).creator).toBe(bob.identity)
  return { fromAlice, fromBob }
}

/** Bob's route refuses to edit Alice's message, and an edit his software signs anyway is dropped by both daemons. */
async function forgedEditIsDropped({ alice, bob, spaceId, chat }: ChatScene, victim: string) {
  const refused = await api(bob.d, 'PATCH', `${C(spaceId, chat)}/messages/${victim}`, { text: 'not yours' })
  expect(refused.status).toBe(403)
  expect(refused.json.error.code).toBe('chat.not_author')

  // Bob's software signs an edit of Alice's message anyway and sends it straight to both daemons.
  const dev = await AccountDevice.start(bob.key, spaceId)
  const alicePeer = await p2pAddress(alice)
  await dev.dial(alicePeer.multiaddr, alicePeer.peerId)
  await dev.syncWith(alicePeer.peerId)
  const forged = await dev.craftWrite(chat, 'chat_messages', victim, 1_000_000, { path: 'text', value: 'forged by bob' })
  for (const target of [alice, bob]) {
    const { peerId, multiaddr } = await p2pAddress(target)
    await dev.dial(multiaddr, peerId)
    await dev.syncWith(peerId)
    expect(await dev.push(peerId, [forged])).toBe('read')
  }
  await dev.close()
  // A message after the forgery reaches both: so would the forgery, had it been applied.
  const after = await send(alice, spaceId, chat, { text: 'after the forgery' })
  const held = await sameMessages([alice, bob], spaceId, chat, 7)
  expect(held.find((m: any) => m.id === victim).text).toBe('alice 3')
  expect(held.map((m: any) => m.id)).toContain(after)
}

/**
 * Paging back from the newest, as a client scrolls up (chat.md "older page"): pages of 4
 * until a short one, every message once, newest first.
 */
async function pagesBackCoverEveryMessage({ alice, spaceId, chat }: ChatScene) {
  const pages: string[] = []
  for (let oldest: string | undefined; ;) {
    const body = { objectId: chat, dataset: 'chat_messages', sort: ['-_ver.id'], limit: 4, ...(oldest ? { filter: { '_ver.id': { $lt: oldest } } } : {}) }
    const page = (await ok(alice.d, 'POST', `${S(spaceId)}/query`, body)).records
    pages.push(...page.map((m: any) => m.id))
    if (page.length < 4) break
    oldest = page[page.length - 1]._ver.id
  }
  expect(pages).toEqual((await messages(alice, spaceId, chat)).map((m) => m.id).reverse())
}

/** Counters and flags on each side after Bob's two messages (one mentioning Alice); returns Alice's messages. */
async function unreadIsPerAccount({ alice, bob, spaceId, chat }: ChatScene) {
  const aliceSees = await until("alice counts bob's messages as unread", async () => {
    const c = await counters(alice, spaceId, chat)
    return c.unread === 5 && c.mentions === 1 ? c : false
  })
  // Bob reacted to one of Alice's messages: one unread reaction for her.
  expect(aliceSees.reactions).toBe(1)
  const bobSees = await counters(bob, spaceId, chat)
  // Bob has Alice's four messages unread (three, plus "after the forgery"), no mention.
  expect(bobSees).toMatchObject({ unread: 4, mentions: 0 })
  const aliceMsgs = await messages(alice, spaceId, chat)
  expect(aliceMsgs.filter((m) => m.unread).every((m) => m.creator === bob.identity)).toBe(true)
  expect(aliceMsgs.filter((m) => m.unreadMention).length).toBe(1)
  return aliceMsgs
}

/** A second device of Alice's account, restored from her mnemonic, finds its devices on the LAN. */
async function aliceSecondDevice({ alice, spaceId, chat }: ChatScene): Promise<Account> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-chat-alice2-'))
  const d2 = await startDaemon(dir)
  fleet.daemons.push(d2)
  await ok(d2, 'POST', '/v1/auth', { mnemonic: alice.mnemonic })
  const alice2: Account = { ...alice, name: 'alice2', d: d2 }
  await until("alice's second device holds the chat", async () => (await messages(alice2, spaceId, chat).catch(() => [])).length === 9, 90_000, 300)
  await until(
    "alice's second device counts the same unread",
    async () => {
      const c = await counters(alice2, spaceId, chat)
      return c.unread === 5 && c.mentions === 1
    },
    60_000,
    300,
  )
  return alice2
}

/** Alice reads everything on her first device: the second device's flags clear, Bob's stay. */
async function readFollowsTheAccount({ alice, bob, spaceId, chat }: ChatScene, alice2: Account, newest: string) {
  expect((await api(alice.d, 'POST', `${C(spaceId, chat)}/messages/${newest}/read`)).status).toBe(204)
  expect(await counters(alice, spaceId, chat)).toMatchObject({ unread: 0, mentions: 0 })
  await until(
    "the read reaches alice's second device",
    async () => {
      const c = await counters(alice2, spaceId, chat)
      const flagged = (await messages(alice2, spaceId, chat)).filter((m) => m.unread || m.unreadMention)
      return c.unread === 0 && c.mentions === 0 && flagged.length === 0
    },
    60_000,
    300,
  )
  // Bob's read state is his own: still four unread.
  expect((await counters(bob, spaceId, chat)).unread).toBe(4)
}

/** A space event from Alice reaches Bob's subscriber, signed as Alice. */
async function spaceEventReachesBob({ alice, bob, spaceId }: ChatScene) {
  const ctrl = new AbortController()
  const res = await fetch(`${bob.d.url}/v1/events/subscribe?scope=space&spaceId=${encodeURIComponent(spaceId)}&type=demo.*`, { signal: ctrl.signal })
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  let text = ''
  const got = (async () => {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return undefined
      text += new TextDecoder().decode(value)
      const m = text.match(/event: event\ndata: (.*)\n/)
      if (m) return JSON.parse(m[1])
    }
  })()
  await until("bob's subscriber is ready", async () => text.includes('event: ready'), 10_000, 50)
  // At most once and unstored: publish until one lands (the connection may still be dialling).
  const event = await until(
    "alice's space event reaches bob",
    async () => {
      await ok(alice.d, 'POST', '/v1/events', { type: 'demo.ping', scope: 'space', spaceId, data: { n: 1 } })
      return Promise.race([got, new Promise<undefined>((r) => setTimeout(() => r(undefined), 500))])
    },
    30_000,
    0,
  )
  ctrl.abort()
  expect(event).toMatchObject({ type: 'demo.ping', scope: 'space', spaceId, data: { n: 1 }, sender: { identity: alice.identity, self: false } })
}

describe.runIf(IN_NETNS)('two accounts chat in a shared space over mDNS', () => {
  it('sends, edits and reactions converge; a forged edit is dropped; unread state is right per account and follows its devices; space events reach members and refuse guests', async () => {
    const scene = await openScene()
    const { alice, bob, guest, spaceId, chat } = scene
    const { fromAlice } = await sendsEditsAndReactionsConverge(scene)
    await forgedEditIsDropped(scene, fromAlice[2])

    // Unread state: Bob mentions Alice once; Alice's own messages are born read.
    await send(bob, spaceId, chat, { text: `hey ${mention(spaceId, alice)}, look` })
    await send(bob, spaceId, chat, { text: 'and one more' })
    await sameMessages([alice, bob], spaceId, chat, 9)
    await pagesBackCoverEveryMessage(scene)
    const aliceMsgs = await unreadIsPerAccount(scene)

    const alice2 = await aliceSecondDevice(scene)
    await readFollowsTheAccount(scene, alice2, aliceMsgs[aliceMsgs.length - 1].id)
    await spaceEventReachesBob(scene)

    // The guest holds no read key of its own: no space events.
    const fromGuest = await api(guest.d, 'POST', '/v1/events', { type: 'demo.ping', scope: 'space', spaceId })
    expect(fromGuest.status).toBe(409)
    expect(fromGuest.json.error.code).toBe('events.no_read_key')
  }, 300_000)
})
