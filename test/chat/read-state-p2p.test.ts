import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { bundleRootId } from '../../sync/space/bundles/model.ts'
import { until } from '../node/p2p-daemons.ts'
import { call, listen, ok, openSse, type Frame } from '../routes/helpers.ts'

/*
 * Read state over real libp2p on loopback (no mDNS): account A on two daemons (a1, a2: the same
 * mnemonic), account B on a third. B's messages are unread with the right mention counts on both
 * of A's devices and not on B's; A reading on a1 clears the counters on a2 (tech space sync), which
 * a2's live objects subscription frames as an update.
 */
interface Daemon {
  app: ReturnType<typeof buildApp>
  engine: DaemonHost
  accountId: string
  mnemonic?: string
  root: string
}

const running: Daemon[] = []

async function boot(mnemonic?: string): Promise<Daemon> {
  const root = mkdtempSync(join(tmpdir(), 'svc-read-p2p-'))
  const engine = new DaemonHost({
    dataRoot: root,
    noMdns: true,
    p2pListen: ['/ip4/127.0.0.1/tcp/0'],
    redial: { baseMs: 40, maxMs: 200 },
    scheduler: { periodMs: 300, backoffBaseMs: 50, backoffMaxMs: 300 },
  })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  const app = buildApp({ session, engine })
  const d: Daemon = { app, engine, root, accountId: '' }
  running.push(d)
  const res = await ok(call(app, 'POST', '/v1/auth', mnemonic ? { mnemonic } : {}), 201)
  d.accountId = res.accountId
  d.mnemonic = res.mnemonic
  return d
}

const addr = (d: Daemon) => {
  const p2p = d.engine.p2p()!
  const port = p2p
    .snapshot()
    .listen.map((a: string) => /\/tcp\/(\d+)/.exec(a)?.[1])
    .find(Boolean)
  return `/ip4/127.0.0.1/tcp/${port}/p2p/${p2p.transport.peerId}`
}

let a1: Daemon
let a2: Daemon
let b: Daemon
let spaceId: string
let chat: string

beforeAll(async () => {
  a1 = await boot()
  ;[a2, b] = await Promise.all([boot(a1.mnemonic), boot()])
  expect(a2.accountId).toBe(a1.accountId)
  await ok(call(a2.app, 'POST', '/v1/peers', { multiaddr: addr(a1) }), 201)
  await ok(call(b.app, 'POST', '/v1/peers', { multiaddr: addr(a1) }), 201)
  spaceId = (await ok(call(a1.app, 'POST', '/v1/spaces', { name: 'read over the wire' }), 201)).id
  await ok(call(a1.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId }))
  chat = bundleRootId(spaceId, 'system:general-chat/v1')
  await ok(call(a1.app, 'POST', `/v1/spaces/${spaceId}/acl/add`, { identities: [b.accountId], permission: 'writer' }))
  await until('the invite_pending row on b', async () => (await ok(call(b.app, 'GET', '/v1/spaces?status=invite_pending'))).some((r: { id: string }) => r.id === spaceId))
  await call(b.app, 'POST', `/v1/spaces/${spaceId}/invite/accept`)
  await until('the chat root on b and on a2', async () => !!b.engine.account().held(spaceId)?.objectDoc(chat) && !!a2.engine.account().held(spaceId)?.objectDoc(chat))
}, 90_000)

afterAll(async () => {
  for (const d of running) await stopGracefully(d.app, 1000).catch(() => undefined)
  for (const d of running) rmSync(d.root, { recursive: true, force: true })
})

const row = async (d: Daemon) => (await ok(call(d.app, 'POST', `/v1/spaces/${spaceId}/objects/query`, { filter: { id: chat } }))).records[0]?.chat
const changes = (frames: Frame[]) => frames.filter((f) => f.event === 'changes').flatMap((f) => f.data as Array<Record<string, any>>)

describe('chat read state between daemons', () => {
  it("counters and mention flags are right on each side; a read on one of A's devices clears them on the other", async () => {
    const M = `/v1/spaces/${spaceId}/objects/${chat}/chat/messages`
    await ok(call(b.app, 'POST', M, { text: 'hello A' }), 201)
    await ok(call(b.app, 'POST', M, { text: `ping svc://m/${spaceId}/${a1.accountId}` }), 201)
    for (const d of [a1, a2]) {
      await until(`unread counters on ${d === a1 ? 'a1' : 'a2'}`, async () => {
        const c = await row(d)
        return c?.unreadCount === 2 && c.unreadMentions === 1
      })
    }
    await until('b holds its messages', async () => (await row(b))?.unreadCount === 0)
    expect(await row(b)).toEqual({ unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 })
    const mentioned = await ok(call(a2.app, 'POST', `/v1/spaces/${spaceId}/query`, { objectId: chat, dataset: 'chat_messages', filter: { unreadMention: true } }))
    expect(mentioned.records.map((r: any) => r.mentions)).toEqual([[a1.accountId]])

    const base = await listen(a2.app)
    const s = await openSse(`${base}/v1/spaces/${spaceId}/objects/query/subscribe`, { filter: { id: chat }, sort: ['-chat.unreadCount'], limit: 5 })
    try {
      await s.until((f) => f.length >= 2)
      expect(s.frames[1].data.records[0].chat).toMatchObject({ unreadCount: 2 })
      await ok(call(a1.app, 'POST', `/v1/spaces/${spaceId}/objects/${chat}/chat/read-all`), 204)
      await s.until((f) => changes(f).some((c) => c.updated.some((u: any) => u.doc.chat?.unreadCount === 0 && u.doc.chat.unreadMentions === 0)), 30_000)
    } finally {
      s.destroy()
    }
    expect(await row(a2)).toEqual({ unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 })
    // B's side is untouched: what A read is A's alone.
    expect(await row(b)).toEqual({ unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 })
  }, 90_000)
})
