import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { bootApp, call, expectError, listen, ok, type Booted } from '../routes/helpers.ts'
import { main } from '../../server/cli/dispatch.ts'
import { resolveServeConfig } from '../../server/cli/serve-config.ts'
import { memoryIO } from '../server/process.ts'
import { writeFileSync } from 'node:fs'

/** A daemon with P2P on (loopback, no mDNS) and short redials, driven through app.inject. */
async function bootP2P(peers?: string[], at?: string) {
  const root = at ?? mkdtempSync(join(tmpdir(), 'svc-peers-'))
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2pListen: ['/ip4/127.0.0.1/tcp/0'], redial: { baseMs: 40, maxMs: 200 }, ...(peers ? { peers } : {}) })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  const app = buildApp({ session, engine })
  let accountId: string
  if (at) accountId = (await session.bootAtStart())!
  else {
    const res = await app.inject({ method: 'POST', url: '/v1/auth', payload: {} })
    expect(res.statusCode).toBe(201)
    accountId = res.json<{ accountId: string }>().accountId
  }
  return {
    app,
    engine,
    accountId,
    root,
    file: join(root, 'accounts', accountId, P2P.peersFile),
    /** Stops the daemon, keeping its data root. */
    async stop() {
      await stopGracefully(app, 1000)
    },
    async close() {
      await stopGracefully(app, 1000)
      rmSync(root, { recursive: true, force: true })
    },
  }
}

const peerIdOf = async (seed: number) => peerIdFromPrivateKey(await generateKeyPairFromSeed('Ed25519', new Uint8Array(32).fill(seed))).toString()

let d: Awaited<ReturnType<typeof bootP2P>>
let off: Booted
beforeAll(async () => {
  d = await bootP2P()
  off = await bootApp()
})
afterAll(async () => {
  await d.close()
  await off.close()
})

describe('peers added by address', () => {
  it('a bad multiaddr is 400 request.invalid_field; other bad bodies get their codes', async () => {
    const other = await peerIdOf(7)
    for (const bad of [
      'garbage',
      '/ip4/127.0.0.1/tcp/4001', // no peer id
      '/ip4/1.2.3/tcp/1/p2p/' + other,
      '/ip4/127.0.0.1/tcp/70000/p2p/' + other,
      '/ip4/127.0.0.1/udp/4001/p2p/' + other, // a transport the node does not run
      '/ip4/127.0.0.1/tcp/4001/p2p/notapeerid',
      '/ip4/127.0.0.1/tcp/4001/ws/p2p/' + other,
    ]) {
      expectError(await call(d.app, 'POST', '/v1/peers', { multiaddr: bad }), 400, 'request.invalid_field')
    }
    // Our own device.
    expectError(await call(d.app, 'POST', '/v1/peers', { multiaddr: `/ip4/127.0.0.1/tcp/1/p2p/${d.engine.p2p()!.transport.peerId}` }), 400, 'request.invalid_field')
    expectError(await call(d.app, 'POST', '/v1/peers', { multiaddr: 'x'.repeat(P2P.maxMultiaddrLength + 1) }), 400, 'request.invalid_field')
    expectError(await call(d.app, 'POST', '/v1/peers', { multiaddr: '/ip4/127.0.0.1/tcp/1/p2p/' + other, extra: 1 }), 400, 'request.unknown_field')
    expectError(await call(d.app, 'POST', '/v1/peers', {}), 400, 'request.missing_field')
    expect(await ok(call(d.app, 'GET', '/v1/peers'))).toEqual({ peers: [] })
  })

  it('add: 201 with the record, again 200; kept 0600 in the account directory; redialled while unreachable; delete 204 then 404', async () => {
    const other = await peerIdOf(8)
    // Nobody listens on port 1: every dial fails, so it is redialled with growing delays.
    const ma = `/ip4/127.0.0.1/tcp/1/p2p/${other}`
    const rec = await ok(call(d.app, 'POST', '/v1/peers', { multiaddr: ma }), 201)
    expect(rec).toMatchObject({ peerId: other, multiaddr: ma, source: 'api', connected: false, identity: null })
    expect(rec.addedAt.$date).toMatch(/^\d{4}-/)
    expect((await ok(call(d.app, 'POST', '/v1/peers', { multiaddr: ma }), 200)).peerId).toBe(other)
    const file = JSON.parse(readFileSync(d.file, 'utf8'))
    expect(file.peers).toEqual([{ peerId: other, multiaddr: ma, addedAt: expect.any(Number) }])
    expect(statSync(d.file).mode & 0o777).toBe(0o600)
    const end = Date.now() + 10_000
    let listed: any
    do {
      await new Promise((r) => setTimeout(r, 50))
      listed = (await ok(call(d.app, 'GET', '/v1/peers'))).peers[0]
    } while (listed.failures < 3 && Date.now() < end)
    expect(listed.failures).toBeGreaterThanOrEqual(3)
    expect(listed.lastError).toEqual(expect.any(String))
    expect(listed.nextDialAt).not.toBeNull()

    expectError(await call(d.app, 'DELETE', `/v1/peers/${await peerIdOf(9)}`), 404, 'peer.not_found')
    await ok(call(d.app, 'DELETE', `/v1/peers/${other}`), 204)
    expect(await ok(call(d.app, 'GET', '/v1/peers'))).toEqual({ peers: [] })
    expect(JSON.parse(readFileSync(d.file, 'utf8')).peers).toEqual([])
    expectError(await call(d.app, 'DELETE', `/v1/peers/${other}`), 404, 'peer.not_found')
    expectError(await call(d.app, 'DELETE', '/v1/peers/0OIl'), 400, 'request.invalid_field')
  })

  it('added peers are kept across a restart and dialled again at boot', async () => {
    const e = await bootP2P()
    const ma = `/ip4/127.0.0.1/tcp/1/p2p/${await peerIdOf(10)}`
    await ok(call(e.app, 'POST', '/v1/peers', { multiaddr: ma }), 201)
    await e.stop()
    const again = await bootP2P(undefined, e.root)
    try {
      const [p] = (await ok(call(again.app, 'GET', '/v1/peers'))).peers
      expect(p).toMatchObject({ multiaddr: ma, source: 'api' })
      // Dialled at boot (nobody listens on port 1, so it fails and is scheduled again).
      const end = Date.now() + 10_000
      let failures = 0
      while (failures < 1 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 50))
        failures = (await ok(call(again.app, 'GET', '/v1/peers'))).peers[0].failures
      }
      expect(failures).toBeGreaterThanOrEqual(1)
    } finally {
      await again.close()
    }
  })

  it('with P2P off the list is empty and changes answer 503 server.unavailable', async () => {
    expect(await ok(call(off.app, 'GET', '/v1/peers'))).toEqual({ peers: [] })
    expectError(await call(off.app, 'POST', '/v1/peers', { multiaddr: `/ip4/127.0.0.1/tcp/1/p2p/${await peerIdOf(8)}` }), 503, 'server.unavailable')
  })
})

describe('svc peers add | list | remove', () => {
  it('drive the routes with the existing exit codes', async () => {
    const url = await listen(d.app)
    const run = async (args: string[]) => {
      const m = memoryIO('', { SVC_URL: url })
      return { code: await main(args, m.io), out: m.out(), err: m.err() }
    }
    const other = await peerIdOf(11)
    const ma = `/ip4/127.0.0.1/tcp/1/p2p/${other}`
    const added = await run(['peers', 'add', ma])
    expect(added.code).toBe(0)
    expect(JSON.parse(added.out)).toMatchObject({ peerId: other, multiaddr: ma })
    const listed = await run(['peers', 'list'])
    expect(listed.code).toBe(0)
    expect(listed.out).toContain(`${other}  ${ma}  api  not connected`)
    expect(JSON.parse((await run(['peers', 'list', '--json'])).out).peers).toHaveLength(1)
    const bad = await run(['peers', 'add', '/ip4/127.0.0.1/tcp/1'])
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('request.invalid_field')
    expect((await run(['peers', 'remove', other])).code).toBe(0)
    expect((await run(['peers', 'remove', other])).code).toBe(1)
    expect((await run(['peers', 'list'])).out).toContain('no peers added')
    expect((await run(['peers', 'add'])).code).toBe(1)
    // The snapshot is still the bare command.
    expect((await run(['peers'])).out).toContain('this device')
  })
})

describe('config key peers', () => {
  it('flags, env and the config file name peers; bad ones are usage errors; the daemon lists them as config', async () => {
    const a = `/ip4/127.0.0.1/tcp/1/p2p/${await peerIdOf(12)}`
    const b = `/ip4/127.0.0.1/tcp/2/p2p/${await peerIdOf(13)}`
    expect(resolveServeConfig([], {}).peers).toBeUndefined()
    expect(resolveServeConfig(['--peers', `${a},${b}`], {}).peers).toEqual([a, b])
    expect(resolveServeConfig([], { SVC_PEERS: a }).peers).toEqual([a])
    const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'))
    const file = join(dir, 'c.json')
    writeFileSync(file, JSON.stringify({ peers: [b] }))
    expect(resolveServeConfig(['--config', file], {}).peers).toEqual([b])
    writeFileSync(file, JSON.stringify({ peers: b }))
    expect(() => resolveServeConfig(['--config', file], {})).toThrow(/peers must be an array/)
    expect(() => resolveServeConfig(['--peers', '/ip4/127.0.0.1/tcp/1'], {})).toThrow(/--peers/)
    rmSync(dir, { recursive: true, force: true })

    const c = await bootP2P([a])
    try {
      const peers = (await ok(call(c.app, 'GET', '/v1/peers'))).peers
      expect(peers).toMatchObject([{ multiaddr: a, source: 'config' }])
      // Configured peers are not written to the account's file; removing one lasts for the run.
      await ok(call(c.app, 'DELETE', `/v1/peers/${peers[0].peerId}`), 204)
      expect(await ok(call(c.app, 'GET', '/v1/peers'))).toEqual({ peers: [] })
    } finally {
      await c.close()
    }
  })
})
