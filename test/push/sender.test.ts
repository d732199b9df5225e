import { afterEach, describe, expect, it } from 'vitest'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { chatModule } from '../../sync/modules/chat/module.ts'
import { pushModule } from '../../sync/modules/push/module.ts'
import { pushKeysOf } from '../../sync/modules/push/keys.ts'
import { PushReceiver } from '../../sync/modules/push/receiver.ts'
import { toBase64 } from '../../sync/core/base64.ts'
import { chatMentionTopic, identityTopic } from '../../sync/modules/push/topics.ts'
import { PushOutbox, type LinkReply, type PushNodeLink } from '../../sync/modules/push/outbox.ts'
import { encodePushRequest, signSubscribe } from '../../sync/protocol/push-wire.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import type { Env } from '../../sync/core/env.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'
import { generalChat, readState } from '../chat/read-state-helpers.ts'
import { fakeFcm, fakeNtfy, type FakeFcm, type FakeHttp } from './fakes.ts'
import { coreWith, crypto } from './node-fixture.ts'
import { wireLink } from '../../node/push/link.ts'
import type { SpaceReplica } from '../../sync/replica/space-replica.ts'

const closers: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c()
})

/** Account A's engine with a space shared with B (a bare replica of account 2), its general chat and a push node in process. */
async function setup() {
  const ntfy: FakeHttp = await fakeNtfy()
  const fcm: FakeFcm = await fakeFcm()
  closers.push(
    () => ntfy.close(),
    () => fcm.close(),
  )
  const { core, store } = coreWith({ fcm, ntfy: [ntfy] })
  closers.push(
    () => store.close(),
    () => core.close(),
  )
  const a = await AccountEngine.open({
    storage: new MemoryStorageAdapter(),
    crypto: await defaultCryptoProvider(),
    env: seededEnv(1, Date.now()),
    accountKey: keyFor(1),
    modules: DEFAULT_MODULES,
  })
  closers.push(() => a.close())
  const info = await a.createSpace({ name: 'team' })
  const space = a.space(info.id)
  const chatId = await generalChat(space)
  await space.replica.addMember(idFor(2), 'writer')
  const b = await SpaceEngine.open(await deps(2), info.id, keyFor(2), { modules: DEFAULT_MODULES })
  await pushAll(space.replica, b.replica)
  await b.settled()
  const push = a.services.of(pushModule)
  push.attach(wireLink((bytes) => core.handle('peer-a', bytes), crypto))
  /** B's device registering directly with the node, as its own daemon's reconcile would. */
  const subscribeB = async (replica: SpaceReplica, platform: 'android' | 'ntfy', token: string, topics: string[]) => {
    const keys = pushKeysOf(replica)!
    expect(await core.handle('peer-b', encodePushRequest(await signSubscribe(crypto, keys.pushKey, { platform, token, topics, ts: Date.now() })))).toMatchObject({ ok: true })
  }
  const receiverOf = (replica: SpaceReplica, r = new PushReceiver()) => {
    const k = pushKeysOf(replica)!
    r.remember(info.id, { spaceKey: toBase64(k.pushKey.publicKey), encKey: toBase64(k.encKey), encKeyId: k.encKeyId })
    return r
  }
  const chat = space.services.of(chatModule)
  return { a, b, space, chatId, push, core, ntfy, fcm, subscribeB, receiverOf, chat, spaceId: info.id }
}

const dataOf = (body: string) => JSON.parse(body).message.data as { keyId: string; payload: string; silent: string; groupId: string }

describe('push from chat writes', () => {
  it("a send reaches B's token sealed; B's receiver opens it to the spec payload", async () => {
    const s = await setup()
    await s.subscribeB(s.b.replica, 'android', 'tok-b', ['chats', idFor(2)])
    // The sender's name is the profile its account publishes in the space.
    await s.space.replica.setProfile({ name: 'Alice' })
    const res = await s.chat.send(s.chatId, { text: 'hello B' })
    const [got] = await s.fcm.waitFor(1)
    const data = dataOf(got.body)
    expect(data.silent).toBe('false')
    const opened = s.receiverOf(s.b.replica).receive(data)
    expect(opened).toEqual({
      kind: 'message',
      spaceId: s.spaceId,
      payload: {
        spaceId: s.spaceId,
        spaceUxType: 'chat',
        spaceType: 'svc.space',
        senderId: idFor(1),
        type: 1,
        newMessage: {
          chatId: s.chatId,
          msgId: res.recordIds[0],
          spaceName: 'team',
          chatName: 'General chat',
          senderName: 'Alice',
          text: 'hello B',
          hasAttachments: false,
          attachments: [],
        },
      },
    })
    // A receiver that never saw the key shows the generic notice.
    expect(new PushReceiver().receive(data)).toEqual({ kind: 'generic' })
  })

  it("the sending device's own token gets no push of its own message; the other subscribers do", async () => {
    const s = await setup()
    // A's device registers its token: the reconcile loop subscribes it to `chats` as B is.
    await s.push.setToken({ platform: 'ntfy', token: `${s.ntfy.url}/a-phone` })
    await s.push.reconcile()
    expect(s.push.subscriptions()).toEqual(expect.arrayContaining([{ spaceKey: expect.any(String), topic: 'chats' }]))
    await s.subscribeB(s.b.replica, 'android', 'tok-b', ['chats'])
    await s.chat.send(s.chatId, { text: 'from A' })
    const [got] = await s.fcm.waitFor(1)
    expect(s.receiverOf(s.b.replica).receive(dataOf(got.body))).toMatchObject({ kind: 'message', payload: { newMessage: { text: 'from A', chatName: 'General chat' } } })
    // Both deliveries were queued by the one send: once none is in flight, A's own token got nothing.
    for (let q = await s.core.queue(); q.depth + q.inFlight > 0; q = await s.core.queue()) await new Promise((r) => setTimeout(r, 20))
    expect(s.ntfy.received).toHaveLength(0)
  })

  it('a mention reaches the mention topic only; an edit adding a mention pushes once; reactions push nothing', async () => {
    const s = await setup()
    await s.subscribeB(s.b.replica, 'ntfy', `${s.ntfy.url}/mention`, [chatMentionTopic(s.chatId, idFor(2))])
    await s.subscribeB(s.b.replica, 'android', 'tok-all', ['chats'])
    await s.chat.send(s.chatId, { text: 'no mention' })
    await s.chat.send(s.chatId, { text: `hi svc://m/${s.spaceId}/${idFor(2)}` })
    await s.fcm.waitFor(2)
    await s.ntfy.waitFor(1)
    const plain = await s.chat.send(s.chatId, { text: 'plain' })
    await s.fcm.waitFor(3)
    await s.chat.edit(s.chatId, plain.recordIds[0], { text: `now svc://m/${s.spaceId}/${idFor(2)}` })
    await s.ntfy.waitFor(2)
    // Edit again keeping the same mention, then react: nothing more is queued.
    const queued = s.push.outbox.stats.queued
    await s.chat.edit(s.chatId, plain.recordIds[0], { text: `still svc://m/${s.spaceId}/${idFor(2)}` })
    await s.chat.toggleReaction(s.chatId, plain.recordIds[0], '👍')
    expect(s.push.outbox.stats.queued).toBe(queued)
    await new Promise((r) => setTimeout(r, 200))
    expect(s.ntfy.received).toHaveLength(2)
    // The edit did not go room-wide: the all-messages token got the 3 sends only.
    expect(s.fcm.received).toHaveLength(3)
  })

  it("a read sends a silent notice to the account's own identity topic, through the token the reconcile loop registered", async () => {
    const s = await setup()
    await s.push.setToken({ platform: 'ntfy', token: `${s.ntfy.url}/a-phone` })
    await s.push.reconcile()
    expect(s.push.subscriptions()).toEqual(
      expect.arrayContaining([
        { spaceKey: expect.any(String), topic: 'chats' },
        { spaceKey: expect.any(String), topic: identityTopic(idFor(1)) },
      ]),
    )
    // B writes; A receives it (unread), then reads it.
    await b_sends(s)
    await readState(s.space).readAll(s.chatId)
    const [got] = await s.ntfy.waitFor(1)
    const msg = JSON.parse(got.body)
    expect(msg.silent).toBe(true)
    expect(s.receiverOf(s.space.replica).receive(msg)).toMatchObject({ kind: 'message', payload: { type: 2, senderId: idFor(1) } })
  })

  it("after B is removed and the key rotates, B's cached key opens nothing new and the key id changes", async () => {
    const s = await setup()
    await s.subscribeB(s.b.replica, 'android', 'tok-b', ['chats'])
    const cacheB = s.receiverOf(s.b.replica)
    const before = pushKeysOf(s.space.replica)!
    const rowBefore = (await s.a.info(s.spaceId)).push!
    expect(rowBefore).toEqual({ spaceKey: toBase64(before.pushKey.publicKey), encKey: toBase64(before.encKey), encKeyId: before.encKeyId })
    await s.space.replica.removeMember(idFor(2))
    const after = pushKeysOf(s.space.replica)!
    // The key mirror: the space row shows the new key id; the receiver caches it from there.
    const rowAfter = (await s.a.info(s.spaceId)).push!
    expect(rowAfter.encKeyId).toBe(after.encKeyId)
    expect(rowAfter.encKeyId).not.toBe(rowBefore.encKeyId)
    expect(rowAfter.spaceKey).toBe(rowBefore.spaceKey)
    expect(after.spaceKey).toBe(before.spaceKey)
    expect(after.encKeyId).not.toBe(before.encKeyId)
    await s.chat.send(s.chatId, { text: 'after removal' })
    const [got] = await s.fcm.waitFor(1)
    const data = dataOf(got.body)
    expect(data.keyId).toBe(after.encKeyId)
    expect(cacheB.receive(data)).toEqual({ kind: 'generic' })
    expect(s.receiverOf(s.space.replica).receive(data)).toMatchObject({ kind: 'message', payload: { newMessage: { text: 'after removal' } } })
  })

  it("a registered token is kept in the device's storage: an engine reopened on it has it, a deleted one stays deleted", async () => {
    const storage = new MemoryStorageAdapter()
    const open = () => AccountEngine.open({ storage, crypto, env: seededEnv(3, Date.now()), accountKey: keyFor(3), modules: DEFAULT_MODULES })
    // Never reached: the token routes answer from local state.
    const link = wireLink(() => Promise.reject(new Error('no push node in this test')), crypto)
    const first = await open()
    first.services.of(pushModule).attach(link)
    await first.services.of(pushModule).setToken({ platform: 'android', token: 'fcm-token-1' })
    await first.close()
    const second = await open()
    closers.push(() => second.close())
    const again = second.services.of(pushModule)
    again.attach(link)
    expect(await again.getToken()).toEqual({ registered: true, platform: 'android' })
    await again.deleteToken()
    await second.close()
    const third = await open()
    closers.push(() => third.close())
    third.services.of(pushModule).attach(link)
    expect(await third.services.of(pushModule).getToken()).toEqual({ registered: false })
  })

  it('unconfigured push: routes refuse with push.disabled; writes queue nothing', async () => {
    const s = await setup()
    s.push.detach()
    await expect(s.push.getToken()).rejects.toMatchObject({ code: 'push.disabled' })
    const q = s.push.outbox.stats.queued
    await s.chat.send(s.chatId, { text: 'x' })
    expect(s.push.outbox.stats.queued).toBe(q)
  })
})

async function b_sends(s: Awaited<ReturnType<typeof setup>>) {
  await s.b.services.of(chatModule).send(s.chatId, { text: 'from B' })
  await pushAll(s.b.replica, s.space.replica)
  await s.space.settled()
  await readState(s.space).settled()
}

/** An env whose timers run only when the test says (virtual time for retries). */
function manualEnv(): Env & { fire(): number } {
  const base = seededEnv(5)
  let timers: Array<() => void> = []
  return {
    ...base,
    setTimer: (_ms, fn) => {
      timers.push(fn)
      return () => void (timers = timers.filter((f) => f !== fn))
    },
    fire() {
      const due = timers
      timers = []
      for (const f of due) f()
      return due.length
    },
  }
}

const SEND = { pushKey: keyFor(9), topics: ['chats'], keyId: 'k', payload: new Uint8Array(1), silent: false, ts: 0 }
const linkOf = (f: () => Promise<LinkReply>): PushNodeLink => ({ send: f, subscribe: f, unregister: f })
const tick = () => new Promise((r) => setTimeout(r, 5))

describe('send retry', () => {
  it('an unreachable node is retried 6 times 10 s apart, then given up', async () => {
    const env = manualEnv()
    let calls = 0
    const ob = new PushOutbox(env, () => linkOf(async () => (calls++, Promise.reject(new Error('down')))))
    ob.enqueue((l) => l.send(SEND))
    for (let i = 0; i < 10; i++) {
      await tick()
      env.fire()
    }
    await tick()
    expect(calls).toBe(6)
    expect(ob.stats).toMatchObject({ retried: 5, failed: 1, sent: 0 })
  })

  it('a node back after two failures gets the send; no valid topics stops at once', async () => {
    const env = manualEnv()
    let calls = 0
    const ob = new PushOutbox(env, () => linkOf(async () => (++calls <= 2 ? Promise.reject(new Error('down')) : { ok: true as const, validTopics: 2, delivered: 1 })))
    ob.enqueue((l) => l.send(SEND))
    for (let i = 0; i < 5; i++) {
      await tick()
      env.fire()
    }
    expect(calls).toBe(3)
    expect(ob.stats).toMatchObject({ sent: 1, retried: 2, failed: 0 })
    let n = 0
    const stop = new PushOutbox(env, () => linkOf(async () => (n++, { ok: true as const, validTopics: 0, delivered: 0 })))
    stop.enqueue((l) => l.send(SEND))
    await tick()
    expect(env.fire()).toBe(0)
    expect(n).toBe(1)
    expect(stop.stats.noTopics).toBe(1)
  })
})

describe('renewal: the node evicts idle registrations, so held ones are sent again', () => {
  it('an unchanged set is not sent again within a day, and is after one', async () => {
    const base = seededEnv(7, Date.now())
    let skew = 0
    const env: Env = { ...base, now: () => base.now() + skew }
    const a = await AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto: await defaultCryptoProvider(), env, accountKey: keyFor(7), modules: DEFAULT_MODULES })
    closers.push(() => a.close())
    await generalChat(a.space((await a.createSpace({ name: 'quiet' })).id))
    const push = a.services.of(pushModule)
    const subscribes: string[][] = []
    push.attach({
      subscribe: async (r) => (subscribes.push(r.topics), { ok: true, validTopics: r.topics.length }),
      unregister: async () => ({ ok: true }),
      send: async () => ({ ok: true }),
    })
    closers.push(() => push.detach())
    await push.setToken({ platform: 'ntfy', token: 'https://ntfy.example.org/quiet' })
    await push.reconcile()
    const first = subscribes.length
    expect(first).toBeGreaterThan(0)
    expect(await push.reconcile()).toBe(0)
    skew += 23 * 3600_000
    expect(await push.reconcile()).toBe(0)
    skew += 2 * 3600_000
    expect(await push.reconcile()).toBe(first)
    expect(subscribes.slice(first)).toEqual(subscribes.slice(0, first))
  })
})
