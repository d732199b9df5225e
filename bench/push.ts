/**
 * Push benchmark (issue 15), in one process on loopback with real sockets: a push node
 * (`PushNodeServer`: libp2p listener, SQLite store) and a fake UnifiedPush/ntfy provider
 * (`test/push/fakes.ts`), an account engine with the push module linked over libp2p.
 *
 * - sendToProvider: from `ChatMessages.send` (the route's service call) until the fake provider
 *   has the sealed payload, p50/p99 over BENCH_PUSH_SENDS (1,000) sends, one at a time.
 * - forwarding: sealed sends through the node (libp2p request, signature check, store lookup,
 *   provider POST; every one must be delivered), 16 in flight, BENCH_PUSH_FORWARDS (2,000).
 *   Against a raw HTTP POST loop of the same body to the same fake at the same concurrency:
 *   ratio = node rate / raw rate (target >= 0.5). The node runs with its send rate raised
 *   (`rates`): the default 600/min per peer would refuse most of a benchmark's sends, which
 *   measures the limit, not forwarding.
 *   The node answers a send once its deliveries are queued, so the run is timed until the fake
 *   has every push, not until the replies.
 * - flood (issue 33): a `svc push-node` process of its own (default store: a file), and 10
 *   libp2p peers each sending 30 subscribes, each under a fresh self-made space key, with 256
 *   topics and a 4 KiB token. The node's RSS (/proc/<pid>/status) before, at its peak during and
 *   after the flood: growth target <= 64 MB. The same flood against a node on an in-memory store,
 *   in the same run, is the baseline a file store is compared with.
 * - reconcile: one pass over 100 spaces (the engine's real reconcile, each space with its general chat,
 *   one signed subscribe per space, answered in process), and the
 *   topic computation alone for 100 spaces x 20 chats (a space has one chat today: only the
 *   general-chat root may carry the chat type).
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defaultCryptoProvider, nobleProvider } from '../sync/crypto/provider.ts'
import { DEFAULT_MODULES } from '../sync/modules/index.ts'
import { chatModule } from '../sync/modules/chat/module.ts'
import { pushModule } from '../sync/modules/push/module.ts'
import { pushKeysOf } from '../sync/modules/push/keys.ts'
import { topicsFor, type SpaceModes } from '../sync/modules/push/reconcile.ts'
import { AccountEngine } from '../sync/space/account-engine.ts'
import type { SpaceEngine } from '../sync/space/space-engine.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import { systemEnv } from '../sync/core/env.ts'
import { keyPairFromSeed } from '../sync/crypto/keys.ts'
import { encodePushRequest, signSend, signSubscribe } from '../sync/protocol/push-wire.ts'
import { setupUsecase } from '../sync/space/catalog/setup.ts'
import { createSvcNode } from '../node/p2p/libp2p-node.ts'
import { PushNodeServer } from '../node/push-node/server.ts'
import { PushNodeClient } from '../node/push/client.ts'
import { wireLink } from '../node/push/link.ts'
import { fakeNtfy } from '../test/push/fakes.ts'
import { spawnSvc } from '../test/server/process.ts'
import { PUSH_WIRE_LIMITS, type PushReply } from '../sync/protocol/push-wire.ts'

const progress = (m: string) => process.stderr.write(`[bench push] ${m}\n`)
const SENDS = Number(process.env.BENCH_PUSH_SENDS ?? 1000)
const FORWARDS = Number(process.env.BENCH_PUSH_FORWARDS ?? 2000)
const CONCURRENCY = 16
const SPACES = Number(process.env.BENCH_PUSH_SPACES ?? 100)
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const r2 = (x: number) => Math.round(x * 100) / 100

async function pool(n: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++)
    }),
  )
  return performance.now() - t0
}

/** Resident set of a process, MB (Linux). */
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

/** Starts `svc push-node` as a process with this store (undefined: its default, a file in `dir`). */
async function nodeProcess(dir: string, store: string | undefined) {
  const cfg = join(dir, `node-${store ? 'memory' : 'file'}.json`)
  writeFileSync(
    cfg,
    JSON.stringify({
      keySeed: randomBytes(32).toString('hex'),
      listen: ['/ip4/127.0.0.1/tcp/0'],
      dataDir: dir,
      ...(store ? { store } : {}),
      providers: { ntfy: { server: 'https://ntfy.example.org' } },
    }),
  )
  const p = spawnSvc(['push-node', '--config', cfg], { env: { SVC_NO_MDNS: '1' } })
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`push-node did not start: ${p.stderr()}`)), 60_000)
    p.proc.stdout.on('data', () => {
      if (!p.stdout().includes('\n')) return
      clearTimeout(timer)
      resolve(p.stdout().split('\n')[0])
    })
    void p.exited.then((code) => reject(new Error(`push-node exited ${code}: ${p.stderr()}`)))
  })
  return { p, ...(JSON.parse(line) as { peerId: string; addrs: string[]; health: string }) }
}

const FLOOD = { peers: 10, requestsPerPeer: 30, topics: PUSH_WIRE_LIMITS.maxTopicsPerRequest, tokenBytes: PUSH_WIRE_LIMITS.maxTokenBytes }

/** The issue 33 flood against a node process; its RSS before, at peak and after, MB. */
async function flood(dir: string, store: string | undefined) {
  const node = await nodeProcess(dir, store)
  const pid = node.p.proc.pid!
  const peers = await Promise.all(
    Array.from({ length: FLOOD.peers }, () => createSvcNode({ deviceKey: keyPairFromSeed(randomBytes(32)), listen: ['/ip4/127.0.0.1/tcp/0'], mdns: false })),
  )
  try {
    const clients = peers.map((p) => new PushNodeClient(p, { peerId: node.peerId, addrs: node.addrs }))
    const topics = Array.from({ length: FLOOD.topics }, (_, i) => `chats/${i.toString(16).padStart(64, '0')}`)
    let n = 0
    const request = async (c: PushNodeClient) => {
      const head = `https://ntfy.example.org/${n++}/`
      const token = head + 'x'.repeat(FLOOD.tokenBytes - head.length)
      return c.request(encodePushRequest(await signSubscribe(nobleProvider, keyPairFromSeed(randomBytes(32)), { platform: 'ntfy', token, topics, ts: Date.now() })))
    }
    // Every peer connected and the node's code paths warm before the first sample. libp2p takes
    // a few inbound connections a second from one address, so the peers connect one by one.
    for (const c of clients) {
      for (let attempt = 1; ; attempt++) {
        try {
          await c.request(encodePushRequest({ op: 'unregister', platform: 'ntfy', token: 'https://ntfy.example.org/warm', ts: Date.now() }))
          break
        } catch (err) {
          if (attempt >= 10) throw err
          await new Promise((r) => setTimeout(r, 500))
        }
      }
    }
    await new Promise((r) => setTimeout(r, 1000))
    const before = rssMb(pid)
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50)
    const replies: PushReply[] = []
    await Promise.all(
      clients.map(async (c) => {
        for (let i = 0; i < FLOOD.requestsPerPeer; i++) replies.push(await request(c))
      }),
    )
    await new Promise((r) => setTimeout(r, 1000))
    clearInterval(sampler)
    const after = rssMb(pid)
    peak = Math.max(peak, after)
    const health = (await (await fetch(node.health)).json()) as { totals: { subscriptions: number } }
    const refused: Record<string, number> = {}
    for (const r of replies) if (!r.ok) refused[r.code] = (refused[r.code] ?? 0) + 1
    return {
      store: store ?? 'file (default)',
      accepted: replies.filter((r) => r.ok).length,
      refused,
      subscriptions: health.totals.subscriptions,
      rssBeforeMb: r2(before),
      rssPeakMb: r2(peak),
      rssAfterMb: r2(after),
      growthMb: r2(peak - before),
    }
  } finally {
    await Promise.all(
      peers.map(async (p) => {
        await p.stop()
      }),
    )
    node.p.proc.kill('SIGTERM')
    await Promise.race([node.p.exited, new Promise((r) => setTimeout(r, 10_000))])
  }
}

type FakeNtfy = Awaited<ReturnType<typeof fakeNtfy>>
type PushKeys = NonNullable<ReturnType<typeof pushKeysOf>>

/** A space with its general chat, the push module linked to the node, and another member's device subscribed to it. */
async function openPushSpace(account: AccountEngine, client: PushNodeClient, ntfy: FakeNtfy) {
  const push = account.services.of(pushModule)
  push.attach(wireLink((b) => client.request(b), nobleProvider))
  const info = await account.createSpace({ name: 'bench' })
  const space = account.space(info.id)
  const chatId = (await setupUsecase(space.services.bundles, 'general-chat')).bundles[0].bundle.rootId
  const keys = pushKeysOf(space.replica)!
  // The receiving device of another member, subscribed to everything of the space.
  await client.request(encodePushRequest(await signSubscribe(nobleProvider, keys.pushKey, { platform: 'ntfy', token: `${ntfy.url}/b`, topics: ['chats'], ts: Date.now() })))
  return { push, space, chatId, keys }
}

/** One send at a time, each timed until the fake provider has it. */
async function sendToProvider(space: SpaceEngine, chatId: string, ntfy: FakeNtfy): Promise<number[]> {
  const chat = space.services.of(chatModule)
  const lat: number[] = []
  progress(`${SENDS} sends to the fake provider`)
  for (let i = 0; i < SENDS; i++) {
    const before = ntfy.received.length
    const t0 = performance.now()
    await chat.send(chatId, { text: `message ${i}` })
    while (ntfy.received.length === before) await new Promise((r) => setImmediate(r))
    lat.push(performance.now() - t0)
  }
  return lat
}

/** Frames are signed before the clock starts, so the node's rate is forwarding, not signing. */
async function forwarding(client: PushNodeClient, ntfy: FakeNtfy, keys: PushKeys) {
  progress(`forwarding ${FORWARDS} sends through the node vs raw POSTs`)
  const sealed = new Uint8Array(300).fill(7)
  const frames = await Promise.all(
    Array.from({ length: FORWARDS }, async () =>
      encodePushRequest(await signSend(nobleProvider, keys.pushKey, { topics: ['chats'], keyId: keys.encKeyId, payload: sealed, silent: false, ts: Date.now() })),
    ),
  )
  ntfy.received.length = 0
  const t0 = performance.now()
  await pool(FORWARDS, CONCURRENCY, async (i) => {
    const r = await client.request(frames[i])
    if (!r.ok) throw new Error(`the node refused a send: ${r.code}`)
  })
  await ntfy.waitFor(FORWARDS, 120_000)
  const viaNode = performance.now() - t0
  if (ntfy.received.length !== FORWARDS) throw new Error(`the fake got ${ntfy.received.length} of ${FORWARDS} sends`)
  const body = JSON.stringify({ spaceKey: keys.spaceKey, keyId: keys.encKeyId, payload: Buffer.from(sealed).toString('base64'), silent: false })
  const raw = await pool(FORWARDS, CONCURRENCY, async () => {
    const res = await fetch(`${ntfy.url}/b`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    await res.arrayBuffer()
  })
  return { nodeRate: FORWARDS / (viaNode / 1000), rawRate: FORWARDS / (raw / 1000) }
}

/** One reconcile pass over SPACES spaces, on an account of its own so the sends above do not weigh on it; the link answers in process. */
async function reconcilePass() {
  progress(`reconcile over ${SPACES} spaces`)
  const many = await AccountEngine.open({
    storage: new MemoryStorageAdapter(),
    crypto: await defaultCryptoProvider(),
    env: systemEnv,
    accountKey: keyPairFromSeed(randomBytes(32)),
    modules: DEFAULT_MODULES,
  })
  try {
    for (let i = 0; i < SPACES; i++) {
      const s = many.space((await many.createSpace({ name: `s${i}` })).id)
      await setupUsecase(s.services.bundles, 'general-chat')
    }
    const p = many.services.of(pushModule)
    p.attach({ subscribe: async () => ({ ok: true, validTopics: 1 }), unregister: async () => ({ ok: true }), send: async () => ({ ok: true }) })
    void p.setToken({ platform: 'ntfy', token: 'https://ntfy.example.org/x' })
    await new Promise((r) => setTimeout(r, 50))
    void p.setToken({ platform: 'ntfy', token: 'https://ntfy.example.org/y' })
    const t0 = performance.now()
    const requests = await p.reconcile()
    const reconcileMs = performance.now() - t0
    p.detach()
    return { reconcileMs, requests }
  } finally {
    await many.close()
  }
}

/** The topic computation alone, at 20 chats a space (more than any space has today). */
function topicsTiming() {
  const modes: SpaceModes[] = Array.from({ length: 100 }, (_, s) => ({
    space: 'all',
    chats: new Map(Array.from({ length: 20 }, (_, c) => [`chat-${s}-${c}`, c === 0 ? 'mentions' : undefined] as const)),
  }))
  const t1 = performance.now()
  let topics = 0
  for (const m of modes) topics += topicsFor(m, 'A8LfjpNzrnB4cL1d7i3m6fKcAXydk3mSHoQzJ5WFm1dN').length
  const topicsMs = performance.now() - t1
  return { topicsMs, topics }
}

/** The flood against the default file store, then against an in-memory store as the baseline. */
async function floodBoth() {
  progress(`flood: ${FLOOD.peers} peers x ${FLOOD.requestsPerPeer} subscribes, fresh space keys, ${FLOOD.topics} topics, ${FLOOD.tokenBytes} B tokens`)
  const floodDir = mkdtempSync(join(tmpdir(), 'svc-bench-flood-'))
  try {
    const floodFile = await flood(floodDir, undefined)
    const floodMemory = await flood(floodDir, 'sqlite::memory:')
    return { floodFile, floodMemory }
  } finally {
    rmSync(floodDir, { recursive: true, force: true })
  }
}

export async function benchPush(): Promise<Record<string, unknown>> {
  const ntfy = await fakeNtfy()
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-push-'))
  const server = await PushNodeServer.start({
    keySeed: randomBytes(32).toString('hex'),
    listen: ['/ip4/127.0.0.1/tcp/0'],
    dataDir,
    providers: { ntfy: { allowHttp: true, allowedOrigins: [ntfy.url] } },
    rates: { sendsBurst: 1_000_000, sendsPerMinute: 1_000_000 },
  })
  const node = await createSvcNode({ deviceKey: keyPairFromSeed(randomBytes(32)), listen: ['/ip4/127.0.0.1/tcp/0'], mdns: false })
  const client = new PushNodeClient(node, { peerId: server.peerId, addrs: server.addrs })
  const account = await AccountEngine.open({
    storage: new MemoryStorageAdapter(),
    crypto: await defaultCryptoProvider(),
    env: systemEnv,
    accountKey: keyPairFromSeed(randomBytes(32)),
    modules: DEFAULT_MODULES,
  })
  try {
    const { push, space, chatId, keys } = await openPushSpace(account, client, ntfy)
    const lat = await sendToProvider(space, chatId, ntfy)
    const { nodeRate, rawRate } = await forwarding(client, ntfy, keys)
    const { reconcileMs, requests } = await reconcilePass()
    const { topicsMs, topics } = topicsTiming()
    push.detach()
    const { floodFile, floodMemory } = await floodBoth()
    return {
      sendToProvider: { sends: SENDS, p50Ms: r2(pct(lat, 50)), p99Ms: r2(pct(lat, 99)) },
      forwarding: {
        sends: FORWARDS,
        concurrency: CONCURRENCY,
        nodePerSec: Math.round(nodeRate),
        rawPostPerSec: Math.round(rawRate),
        ratio: r2(nodeRate / rawRate),
        target: '>= 0.5',
      },
      reconcile: { spaces: SPACES, passMs: r2(reconcileMs), subscribeRequests: requests, topicsFor100x20Ms: r2(topicsMs), topics },
      flood: { ...FLOOD, ...floodFile, target: 'growthMb <= 64', baselineInMemoryStore: floodMemory },
    }
  } finally {
    await account.close()
    await node.stop()
    await server.close()
    await ntfy.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
