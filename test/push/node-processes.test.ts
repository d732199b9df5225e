import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { createSvcNode, type SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { PushNodeClient } from '../../node/push/client.ts'
import { pushConfigFromEnv, pushNodeOf } from '../../node/push/config.ts'
import { encodePushRequest } from '../../sync/protocol/push-wire.ts'
import { identityOf } from '../../sync/crypto/keys.ts'
import { spawnSvc } from '../server/process.ts'
import { resolveServeConfig } from '../../server/cli/serve-config.ts'
import { UsageError } from '../../server/cli/io.ts'
import { keyFor } from '../helpers.ts'
import { fakeNtfy, type FakeHttp } from './fakes.ts'
import { sendBytes, spaceKeyFor, subscribeBytes } from './node-fixture.ts'
import { startPg, type PgCluster } from '../fixtures/pg-fixture.ts'

type Proc = ReturnType<typeof spawnSvc>

/** Starts `svc push-node` as a process and waits for its `{peerId, addrs, health}` line. */
async function pushNodeProcess(dir: string, name: string, store: string, ntfy: FakeHttp): Promise<{ p: Proc; peerId: string; addrs: string[]; health: string }> {
  const cfg = join(dir, `${name}.json`)
  writeFileSync(
    cfg,
    JSON.stringify({
      keySeed: randomBytes(32).toString('hex'),
      listen: ['/ip4/127.0.0.1/tcp/0'],
      healthPort: 0,
      store,
      providers: { ntfy: { allowHttp: true, allowedOrigins: [ntfy.url] } },
    }),
  )
  const p = spawnSvc(['push-node', '--config', cfg], { env: { SVC_NO_MDNS: '1' } })
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`push-node ${name} did not start: ${p.stderr()}`)), 60_000)
    const check = () => {
      const l = p.stdout().split('\n')[0]
      if (p.stdout().includes('\n')) {
        clearTimeout(timer)
        resolve(l)
      }
    }
    p.proc.stdout.on('data', check)
    void p.exited.then((code) => reject(new Error(`push-node ${name} exited ${code}: ${p.stderr()}`)))
  })
  return { p, ...(JSON.parse(line) as { peerId: string; addrs: string[]; health: string }) }
}

describe("the daemon's push configuration", () => {
  it('enabled iff a peer id is set; false disables; half-configured is left alone', () => {
    const peerId = '12D3KooWGRUVh7sSTdPMvqpAXcQVH1Ks2GGdYjv3W9MhWj6bM5pK'
    const addr = '/ip4/127.0.0.1/tcp/4001'
    expect(pushNodeOf(pushConfigFromEnv({ SVC_PUSH_PEER_ID: peerId, SVC_PUSH_ADDRS: addr }))).toEqual({ peerId, addrs: [`${addr}/p2p/${peerId}`] })
    expect(pushNodeOf(pushConfigFromEnv({ SVC_PUSH_ENABLED: 'false', SVC_PUSH_PEER_ID: peerId, SVC_PUSH_ADDRS: addr }))).toBeUndefined()
    expect(pushNodeOf(pushConfigFromEnv({ SVC_PUSH_PEER_ID: peerId }))).toBeUndefined()
    expect(pushNodeOf(pushConfigFromEnv({ SVC_PUSH_ADDRS: addr }))).toBeUndefined()
    expect(pushNodeOf(pushConfigFromEnv({ SVC_PUSH_PEER_ID: 'nope', SVC_PUSH_ADDRS: addr }))).toBeUndefined()
    expect(pushNodeOf(pushConfigFromEnv({ SVC_PUSH_PEER_ID: peerId, SVC_PUSH_ADDRS: `${addr}/p2p/12D3KooWCaX7ZmKUcXwR5DdgqMmMb1PV6LNtXnnkZNVUYdfbdSgJ` }))).toBeUndefined()
  })

  it("svc serve reads the config file's push key; the environment replaces it; a bad one is a usage error", () => {
    const peerId = '12D3KooWGRUVh7sSTdPMvqpAXcQVH1Ks2GGdYjv3W9MhWj6bM5pK'
    const d = mkdtempSync(join(tmpdir(), 'svc-push-cfg-'))
    try {
      const file = join(d, 'serve.json')
      writeFileSync(file, JSON.stringify({ push: { peerId, addrs: ['/ip4/127.0.0.1/tcp/4001'] } }))
      expect(resolveServeConfig(['--config', file], {}).push).toEqual({ enabled: null, peerId, addrs: ['/ip4/127.0.0.1/tcp/4001'] })
      expect(resolveServeConfig(['--config', file], { SVC_PUSH_ENABLED: 'false' }).push).toEqual({ enabled: false })
      expect(resolveServeConfig([], {}).push).toBeUndefined()
      writeFileSync(file, JSON.stringify({ push: { peerId: 7 } }))
      expect(() => resolveServeConfig(['--config', file], {})).toThrow(UsageError)
    } finally {
      rmSync(d, { recursive: true, force: true })
    }
  })
})

describe('two push-node processes sharing one PostgreSQL, over libp2p', () => {
  let pg: PgCluster
  let ntfy: FakeHttp
  let dir: string
  let client: SvcLibp2p
  const procs: Proc[] = []
  let n1: Awaited<ReturnType<typeof pushNodeProcess>>
  let n2: Awaited<ReturnType<typeof pushNodeProcess>>

  beforeAll(async () => {
    pg = startPg()
    ntfy = await fakeNtfy()
    dir = mkdtempSync(join(tmpdir(), 'svc-push-nodes-'))
    ;[n1, n2] = await Promise.all([pushNodeProcess(dir, 'one', pg.url, ntfy), pushNodeProcess(dir, 'two', pg.url, ntfy)])
    procs.push(n1.p, n2.p)
    client = await createSvcNode({ deviceKey: keyFor(50), listen: ['/ip4/127.0.0.1/tcp/0'], mdns: false })
  }, 150_000)
  afterAll(async () => {
    await client?.stop()
    for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGTERM')
    await Promise.all(procs.map((p) => Promise.race([p.exited, new Promise((r) => setTimeout(r, 10_000))])))
    await ntfy?.close()
    pg?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  it('a subscription taken by one process is served by the other; health shows counters; a stopped node is unreachable', async () => {
    const c1 = new PushNodeClient(client, { peerId: n1.peerId, addrs: n1.addrs })
    const c2 = new PushNodeClient(client, { peerId: n2.peerId, addrs: n2.addrs })
    const k = spaceKeyFor(1)
    expect(await c1.request(await subscribeBytes(k, 'ntfy', `${ntfy.url}/b`, ['chats']))).toEqual({ ok: true, validTopics: 1 })
    expect(await c2.request(await sendBytes(k, ['chats']))).toEqual({ ok: true, validTopics: 1 })
    expect(await c1.request(await sendBytes(k, ['chats']))).toEqual({ ok: true, validTopics: 1 })
    const got = await ntfy.waitFor(2)
    expect(JSON.parse(got[0].body).spaceKey).toBe(identityOf(k.publicKey))
    type Health = { store: string; counters: { sends: number; forwarded: number }; totals: { subscriptions: number }; queue: { depth: number } }
    const healthOf = async (url: string) => (await (await fetch(url)).json()) as Health
    // Both deliveries done, whichever process took each from the shared queue.
    for (let i = 0; i < 200 && (await healthOf(n1.health)).counters.forwarded + (await healthOf(n2.health)).counters.forwarded < 2; i++) await new Promise((r) => setTimeout(r, 25))
    const health = await healthOf(n2.health)
    expect(health).toMatchObject({ store: 'postgres', counters: { sends: 1 }, totals: { subscriptions: 1 }, queue: { depth: 0 } })
    expect(health.counters.forwarded + (await healthOf(n1.health)).counters.forwarded).toBe(2)
    // A send under a space key nobody subscribed to: the same reply, nothing delivered.
    expect(await c2.request(await sendBytes(spaceKeyFor(2), ['chats']))).toEqual({ ok: true, validTopics: 1 })
    n1.p.proc.kill('SIGTERM')
    await n1.p.exited
    await expect(c1.request(encodePushRequest({ op: 'unregister', platform: 'ntfy', token: 'x', ts: Date.now() }))).rejects.toThrow()
  }, 120_000)
})
