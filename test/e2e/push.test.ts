/**
 * Issue 15, end to end (inside scripts/netns-run.sh only): real daemons of two accounts
 * sharing a space, a `svc push-node` process, a fake FCM (with its OAuth token endpoint) and a
 * fake ntfy on loopback. The daemons dial the push node over libp2p (SVC_PUSH_PEER_ID/ADDRS).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { Fleet, inviteAndAccept, S, type Account } from './accounts.ts'
import { IN_NETNS, ok, until } from './daemons.ts'
import { spawnSvc } from '../server/process.ts'
import { fakeFcm, fakeNtfy, type FakeFcm, type FakeHttp } from '../push/fakes.ts'
import { PushReceiver } from '../../sync/modules/push/receiver.ts'
import { fromBase64 } from '../../sync/core/base64.ts'
import { toBase58 } from '../../sync/core/ids.ts'

const fleet = new Fleet()
const cleanups: Array<() => unknown> = []
afterAll(async () => {
  await fleet.close()
  for (const c of cleanups.reverse()) await c()
}, 60_000)

type Proc = ReturnType<typeof spawnSvc>

async function startPushNode(cfgPath: string): Promise<{ p: Proc; peerId: string; addrs: string[] }> {
  const p = spawnSvc(['push-node', '--config', cfgPath], { env: { SVC_NO_MDNS: '1' } })
  cleanups.push(() => p.proc.exitCode === null && p.proc.kill('SIGKILL'))
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`push-node did not start: ${p.stderr()}`)), 60_000)
    p.proc.stdout.on('data', () => {
      if (p.stdout().includes('\n')) {
        clearTimeout(timer)
        resolve(p.stdout().split('\n')[0])
      }
    })
    void p.exited.then((code) => reject(new Error(`push-node exited ${code}: ${p.stderr()}`)))
  })
  return { p, ...(JSON.parse(line) as { peerId: string; addrs: string[] }) }
}

const C = (spaceId: string, chatId: string) => `${S(spaceId)}/objects/${encodeURIComponent(chatId)}/chat`

async function generalChat(a: Account, spaceId: string): Promise<string> {
  const r = await ok(a.d, 'POST', '/v1/catalog/general-chat/setup', { spaceId })
  return r.bundles.find((b: any) => b.id === 'system:general-chat/v1').bundle.rootId
}

/** The space row's key mirror as a receiver reads it, and the node's base58 space key. */
async function rowPush(a: Account, spaceId: string) {
  const row = await ok(a.d, 'GET', S(spaceId))
  return { push: row.push as { spaceKey: string; encKey: string; encKeyId: string }, spaceKey58: row.push ? toBase58(fromBase64(row.push.spaceKey)) : '' }
}

const fcmData = (f: FakeFcm) => f.received.map((r) => JSON.parse(r.body).message.data as { keyId: string; payload: string; silent: string })

type RowPush = Awaited<ReturnType<typeof rowPush>>

/** Everything the steps share: the fakes, the node's config, the two accounts' space and chat, and rows as first registered. */
interface PushScene {
  fcm: FakeFcm
  ntfy: FakeHttp
  cfgPath: string
  node: Awaited<ReturnType<typeof startPushNode>>
  alice: Account
  bob: Account
  spaceId: string
  chat: string
}

/** The fakes and a push node on a fixed port (a restart must come back at the same address). */
async function startFakesAndNode() {
  const fcm = await fakeFcm()
  const ntfy: FakeHttp = await fakeNtfy()
  cleanups.push(
    () => fcm.close(),
    () => ntfy.close(),
  )
  const dir = mkdtempSync(join(tmpdir(), 'svc-push-e2e-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const cfgPath = join(dir, 'node.json')
  writeFileSync(
    cfgPath,
    JSON.stringify({
      keySeed: randomBytes(32).toString('hex'),
      listen: [`/ip4/127.0.0.1/tcp/${port}`],
      store: `sqlite:${join(dir, 'subs.db')}`,
      providers: { ntfy: { allowHttp: true, allowedOrigins: [ntfy.url] }, fcm: fcm.serviceAccount },
    }),
  )
  const node = await startPushNode(cfgPath)
  return { fcm, ntfy, cfgPath, node }
}

/** The daemons read the node's address from the environment at start, so it is set only around their start. */
async function openScene(): Promise<PushScene> {
  const { fcm, ntfy, cfgPath, node } = await startFakesAndNode()
  process.env.SVC_PUSH_PEER_ID = node.peerId
  process.env.SVC_PUSH_ADDRS = node.addrs.join(',')
  const [alice, bob] = await Promise.all(['alice', 'bob'].map((n) => fleet.account(n)))
  delete process.env.SVC_PUSH_PEER_ID
  delete process.env.SVC_PUSH_ADDRS

  const space = await ok(alice.d, 'POST', '/v1/spaces', { name: 'Team' })
  const chat = await generalChat(alice, space.id)
  await inviteAndAccept(alice, space.id, bob, 'writer')
  expect(await generalChat(bob, space.id)).toBe(chat)
  return { fcm, ntfy, cfgPath, node, alice, bob, spaceId: space.id, chat }
}

/** Bob's phone (FCM) and Alice's other device (ntfy) register; the reconcile loop subscribes them. */
async function registerDevices({ ntfy, alice, bob, spaceId }: PushScene): Promise<{ bobRow: RowPush; aliceRow: RowPush }> {
  await ok(bob.d, 'POST', '/v1/push/token', { platform: 'android', token: 'bob-phone' })
  await ok(alice.d, 'POST', '/v1/push/token', { platform: 'ntfy', token: `${ntfy.url}/alice` })
  const bobRow = await until("bob's row carries push keys", async () => (await rowPush(bob, spaceId)).push && rowPush(bob, spaceId))
  const aliceRow = await rowPush(alice, spaceId)
  expect(aliceRow.push).toEqual(bobRow.push)
  await until(
    'bob holds chats and his identity at the node',
    async () => {
      const subs = (await ok(bob.d, 'GET', '/v1/push/subscriptions')).subscriptions as Array<{ spaceKey: string; topic: string }>
      const mine = subs
        .filter((s) => s.spaceKey === bobRow.spaceKey58)
        .map((s) => s.topic)
        .sort()
      return JSON.stringify(mine) === JSON.stringify(['chats', bob.identity].sort())
    },
    90_000,
    500,
  )
  await until(
    'alice holds her topics',
    async () => (await ok(alice.d, 'GET', '/v1/push/subscriptions')).subscriptions.some((s: any) => s.spaceKey === aliceRow.spaceKey58),
    90_000,
    500,
  )
  return { bobRow, aliceRow }
}

/** A send from Alice reaches Bob's token sealed; then Alice's read goes silent to her own identity topic (her ntfy device). */
async function sendReachesBobAndReadGoesSilent({ fcm, ntfy, alice, bob, spaceId, chat }: PushScene, receiver: PushReceiver) {
  const msgId = (await ok(alice.d, 'POST', `${C(spaceId, chat)}/messages`, { text: 'hello bob' })).recordIds[0]
  await fcm.waitFor(1, 60_000)
  const opened = receiver.receive(fcmData(fcm)[0])
  expect(opened).toMatchObject({
    kind: 'message',
    spaceId,
    payload: { spaceId, senderId: alice.identity, type: 1, newMessage: { chatId: chat, msgId, text: 'hello bob', hasAttachments: false } },
  })

  await ok(bob.d, 'POST', `${C(spaceId, chat)}/messages`, { text: 'hi alice' })
  await until(
    "alice has bob's message unread",
    async () => {
      const rows = (await ok(alice.d, 'POST', `${S(spaceId)}/objects/query`, { filter: { id: chat }, limit: 1 })).records
      return (rows[0]?.chat?.unreadCount ?? 0) > 0
    },
    60_000,
    300,
  )
  const ntfyBefore = ntfy.received.length
  await ok(alice.d, 'POST', `${C(spaceId, chat)}/read-all`)
  const silent = await until(
    "alice's device gets a silent notice",
    async () =>
      ntfy.received
        .slice(ntfyBefore)
        .map((r) => JSON.parse(r.body))
        .find((m) => m.silent === true),
    60_000,
    200,
  )
  expect(receiver.receive(silent)).toMatchObject({ kind: 'message', payload: { type: 2, senderId: alice.identity } })
}

/**
 * Bob switches the space to mentions (his topics become his identity alone): a mention reaches
 * him, a room-wide message does not, an edit adding a mention pushes once. Then back to all.
 */
async function mentionsOnly({ fcm, alice, bob, spaceId, chat }: PushScene, receiver: PushReceiver, bobRow: RowPush) {
  await ok(bob.d, 'PATCH', `${S(spaceId)}/settings`, { set: { notifyMode: 'mentions' } })
  await until(
    'bob holds only his identity topic',
    async () => {
      const subs = (await ok(bob.d, 'GET', '/v1/push/subscriptions')).subscriptions as Array<{ spaceKey: string; topic: string }>
      const mine = subs.filter((s) => s.spaceKey === bobRow.spaceKey58).map((s) => s.topic)
      return JSON.stringify(mine) === JSON.stringify([bob.identity])
    },
    90_000,
    500,
  )
  const mention = `svc://m/${spaceId}/${bob.identity}`
  const beforeMention = fcm.received.length
  await ok(alice.d, 'POST', `${C(spaceId, chat)}/messages`, { text: 'room-wide only' })
  await ok(alice.d, 'POST', `${C(spaceId, chat)}/messages`, { text: `ping ${mention}` })
  await until('the mention reaches bob', async () => fcm.received.length > beforeMention, 60_000, 200)
  // An edit adding a mention pushes once; editing it again with the same mention pushes nothing.
  const plain = (await ok(alice.d, 'POST', `${C(spaceId, chat)}/messages`, { text: 'plain' })).recordIds[0]
  await ok(alice.d, 'PATCH', `${C(spaceId, chat)}/messages/${plain}`, { text: `plain, now ${mention}` })
  await until("the edit's mention reaches bob", async () => fcm.received.length > beforeMention + 1, 60_000, 200)
  await ok(alice.d, 'PATCH', `${C(spaceId, chat)}/messages/${plain}`, { text: `plain, still ${mention}` })
  await new Promise((r) => setTimeout(r, 3000))
  const sinceMention = fcmData(fcm)
    .slice(beforeMention)
    .map((d) => (receiver.receive(d) as any).payload?.newMessage?.text)
  expect(sinceMention).toEqual([`ping ${mention}`, `plain, now ${mention}`])
  await ok(bob.d, 'PATCH', `${S(spaceId)}/settings`, { set: { notifyMode: 'all' } })
  await until(
    'bob holds chats again',
    async () => (await ok(bob.d, 'GET', '/v1/push/subscriptions')).subscriptions.some((s: any) => s.spaceKey === bobRow.spaceKey58 && s.topic === 'chats'),
    90_000,
    500,
  )
}

/** Killing the push node during sends loses no chat write; the sends arrive once it is back. */
async function deadNodeLosesNothing({ fcm, cfgPath, node, alice, spaceId, chat }: PushScene, receiver: PushReceiver) {
  node.p.proc.kill('SIGKILL')
  await node.p.exited
  const fcmBefore = fcm.received.length
  for (let i = 0; i < 3; i++) await ok(alice.d, 'POST', `${C(spaceId, chat)}/messages`, { text: `while down ${i}` })
  const texts = (await ok(alice.d, 'POST', `${S(spaceId)}/query`, { objectId: chat, dataset: 'chat_messages', sort: ['_ver.id'], limit: 100 })).records.map((r: any) => r.text)
  expect(texts.filter((t: string) => t.startsWith('while down'))).toHaveLength(3)
  await startPushNode(cfgPath)
  await until('the retried sends reach bob', async () => fcm.received.length >= fcmBefore + 3, 90_000, 500)
  const retried = fcmData(fcm)
    .slice(fcmBefore)
    .map((d) => (receiver.receive(d) as any).payload?.newMessage?.text)
    .sort()
  expect(retried).toEqual(['while down 0', 'while down 1', 'while down 2'])
}

/**
 * Bob is removed: the read key rotates, the row shows a new key id, and Bob's cached key
 * cannot open what Alice sends next (his token is still at the node: the push key is the same).
 */
async function removalRotatesTheKey({ fcm, alice, bob, spaceId, chat }: PushScene, receiver: PushReceiver, aliceRow: RowPush) {
  await ok(alice.d, 'DELETE', `${S(spaceId)}/members/${encodeURIComponent(bob.identity)}`)
  const rotated = await until(
    "alice's row shows a new key id",
    async () => {
      const r = await rowPush(alice, spaceId)
      return r.push.encKeyId !== aliceRow.push.encKeyId && r
    },
    60_000,
    300,
  )
  expect(rotated.spaceKey58).toBe(aliceRow.spaceKey58)
  const beforeRemoval = fcm.received.length
  await ok(alice.d, 'POST', `${C(spaceId, chat)}/messages`, { text: 'after bob left' })
  await until('the send after removal reaches the old token', async () => fcm.received.length > beforeRemoval, 60_000, 300)
  const after = fcmData(fcm)[beforeRemoval]
  expect(after.keyId).toBe(rotated.push.encKeyId)
  expect(receiver.receive(after)).toEqual({ kind: 'generic' })
  const aliceReceiver = new PushReceiver()
  aliceReceiver.remember(spaceId, rotated.push)
  expect(aliceReceiver.receive(after)).toMatchObject({ kind: 'message', payload: { newMessage: { text: 'after bob left' } } })
}

describe.runIf(IN_NETNS)('push end to end: two daemons, a push node process, fake FCM and ntfy', () => {
  it('sends reach the other account sealed; a mention reaches only the mention topic; an edit adding one pushes once; reads go silent to the own topic; a dead node loses no write and sends retry; removal rotates the key', async () => {
    const scene = await openScene()
    const { bobRow, aliceRow } = await registerDevices(scene)
    // Bob's receiver, holding the keys his row showed before any rotation.
    const receiver = new PushReceiver()
    receiver.remember(scene.spaceId, bobRow.push)
    await sendReachesBobAndReadGoesSilent(scene, receiver)
    await mentionsOnly(scene, receiver, bobRow)
    await deadNodeLosesNothing(scene, receiver)
    await removalRotatesTheKey(scene, receiver, aliceRow)
  }, 600_000)
})
