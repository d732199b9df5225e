import { createServer, type Server } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { call, ok } from '../routes/helpers.ts'

/**
 * Two daemons of one account on loopback with mDNS off: B reaches A only through
 * `POST /v1/peers`; the account's space syncs; A restarts on the same address and B redials it.
 */

interface Daemon {
  app: ReturnType<typeof buildApp>
  engine: DaemonHost
  session: AccountLifecycle
}

async function start(root: string, listen: string): Promise<Daemon> {
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2pListen: [listen], redial: { baseMs: 100, maxMs: 800 }, scheduler: { debounceMs: 20 } })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  const app = buildApp({ session, engine })
  await session.bootAtStart()
  return { app, engine, session }
}

async function until(what: string, cond: () => Promise<boolean> | boolean, ms = 30_000) {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const roots: string[] = []
const running: Daemon[] = []
afterAll(async () => {
  for (const d of running) await stopGracefully(d.app, 1000).catch(() => undefined)
  for (const r of roots) rmSync(r, { recursive: true, force: true })
})

describe('two devices of one account connected only by an added peer address', () => {
  it('sync a space, and reconnect by redial after the first restarts', async () => {
    const rootA = mkdtempSync(join(tmpdir(), 'svc-peerA-'))
    const rootB = mkdtempSync(join(tmpdir(), 'svc-peerB-'))
    roots.push(rootA, rootB)
    let a = await start(rootA, '/ip4/127.0.0.1/tcp/0')
    running.push(a)
    const created = await ok(call(a.app, 'POST', '/v1/auth', {}), 201)
    const space = await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Far' }), 201)
    const first = (await ok(call(a.app, 'POST', `/v1/spaces/${space.id}/objects`, {}), 201)).objectId

    const b = await start(rootB, '/ip4/127.0.0.1/tcp/0')
    running.push(b)
    await ok(call(b.app, 'POST', '/v1/auth', { mnemonic: created.mnemonic }), 201)
    const p2pA = a.engine.p2p()!
    const addr = p2pA.node
      .getMultiaddrs()
      .find((m) => m.toString().startsWith('/ip4/127.0.0.1/tcp/'))!
      .toString()
    const port = addr.split('/')[4]
    const peerIdA = p2pA.transport.peerId
    const ma = `${addr.replace(/\/p2p\/.*$/, '')}/p2p/${peerIdA}`
    const rec = await ok(call(b.app, 'POST', '/v1/peers', { multiaddr: ma }), 201)
    expect(rec.peerId).toBe(peerIdA)

    await until('B lists the space', async () => (await b.engine.account().listSpaces()).some((s) => s.id === space.id))
    await until('B holds the first object', () => !!b.engine.account().held(space.id)?.objectDoc(first))
    await until('B sees A connected and authenticated', async () => {
      const [p] = (await ok(call(b.app, 'GET', '/v1/peers'))).peers
      return p.connected && p.identity === created.accountId
    })

    // A goes away; B keeps the address and redials it.
    await stopGracefully(a.app, 1000)
    running.splice(running.indexOf(a), 1)
    await until('B sees A gone', async () => !(await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].connected)
    await until('a redial failed', async () => (await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].failures >= 1)

    // A comes back on the same address (it knows nothing of B's) and writes.
    a = await start(rootA, `/ip4/127.0.0.1/tcp/${port}`)
    running.push(a)
    expect(a.engine.p2p()!.transport.peerId).toBe(peerIdA)
    const second = (await ok(call(a.app, 'POST', `/v1/spaces/${space.id}/objects`, {}), 201)).objectId
    await until('B redialled A', async () => (await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].connected)
    await until('B holds the object A wrote after its restart', () => !!b.engine.account().held(space.id)?.objectDoc(second))
    const [p] = (await ok(call(b.app, 'GET', '/v1/peers'))).peers
    expect(p).toMatchObject({ connected: true, failures: 0, lastError: null, nextDialAt: null })
  }, 90_000)

  it('a daemon left to pick its port (tcp/0) takes its last one again after a restart, and B redials it; a taken one falls back (issue 39)', async () => {
    const rootA = mkdtempSync(join(tmpdir(), 'svc-portA-'))
    const rootB = mkdtempSync(join(tmpdir(), 'svc-portB-'))
    roots.push(rootA, rootB)
    const ANY = '/ip4/127.0.0.1/tcp/0'
    const portOf = (d: Daemon) =>
      Number(
        /\/tcp\/(\d+)/.exec(
          d.engine
            .p2p()!
            .node.getMultiaddrs()
            .find((m) => !m.toString().includes('/ws'))!
            .toString(),
        )![1],
      )
    let a = await start(rootA, ANY)
    running.push(a)
    const created = await ok(call(a.app, 'POST', '/v1/auth', {}), 201)
    const space = await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Stable' }), 201)
    const b = await start(rootB, ANY)
    running.push(b)
    await ok(call(b.app, 'POST', '/v1/auth', { mnemonic: created.mnemonic }), 201)
    const port = portOf(a)
    const peerIdA = a.engine.p2p()!.transport.peerId
    await ok(call(b.app, 'POST', '/v1/peers', { multiaddr: `/ip4/127.0.0.1/tcp/${port}/p2p/${peerIdA}` }), 201)
    await until('B sees A connected', async () => (await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].connected)

    const restartA = async () => {
      await stopGracefully(a.app, 1000)
      running.splice(running.indexOf(a), 1)
      a = await start(rootA, ANY)
      running.push(a)
    }
    await restartA()
    expect(portOf(a)).toBe(port)
    const second = (await ok(call(a.app, 'POST', `/v1/spaces/${space.id}/objects`, {}), 201)).objectId
    await until('B redialled A on its kept port', async () => (await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].connected)
    await until('B holds the object A wrote after its restart', () => !!b.engine.account().held(space.id)?.objectDoc(second))

    // Its port taken meanwhile, A listens on another and keeps that one for the next start.
    await stopGracefully(a.app, 1000)
    running.splice(running.indexOf(a), 1)
    const squatter = await new Promise<Server>((resolve, reject) => {
      const srv = createServer()
      srv.once('error', reject)
      srv.listen(port, '127.0.0.1', () => resolve(srv))
    })
    try {
      a = await start(rootA, ANY)
      running.push(a)
    } finally {
      squatter.close()
    }
    const moved = portOf(a)
    expect(moved).not.toBe(port)
    await restartA()
    expect(portOf(a)).toBe(moved)
  }, 90_000)

  it('a peer whose port moved is found again by its own announcement, and its new address kept (issue 39)', async () => {
    const rootA = mkdtempSync(join(tmpdir(), 'svc-moveA-'))
    const rootB = mkdtempSync(join(tmpdir(), 'svc-moveB-'))
    roots.push(rootA, rootB)
    const ANY = '/ip4/127.0.0.1/tcp/0'
    const portOf = (d: Daemon) =>
      Number(
        /\/tcp\/(\d+)/.exec(
          d.engine
            .p2p()!
            .node.getMultiaddrs()
            .find((m) => !m.toString().includes('/ws'))!
            .toString(),
        )![1],
      )
    const addrOf = (d: Daemon) => `/ip4/127.0.0.1/tcp/${portOf(d)}/p2p/${d.engine.p2p()!.transport.peerId}`
    let a = await start(rootA, ANY)
    running.push(a)
    const created = await ok(call(a.app, 'POST', '/v1/auth', {}), 201)
    const space = await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Moved' }), 201)
    const b = await start(rootB, ANY)
    running.push(b)
    await ok(call(b.app, 'POST', '/v1/auth', { mnemonic: created.mnemonic }), 201)
    const peerB = b.engine.p2p()!.transport.peerId
    // Each added the other by address.
    await ok(call(b.app, 'POST', '/v1/peers', { multiaddr: addrOf(a) }), 201)
    await ok(call(a.app, 'POST', '/v1/peers', { multiaddr: addrOf(b) }), 201)
    await until('B sees A connected', async () => (await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].connected)
    const oldPort = portOf(a)

    // A restarts while another program holds its port: it listens elsewhere, dials B (which it
    // listed), and B learns A's new address from A's announcement on that connection.
    await stopGracefully(a.app, 1000)
    running.splice(running.indexOf(a), 1)
    const squatter = await new Promise<Server>((resolve, reject) => {
      const srv = createServer()
      srv.once('error', reject)
      srv.listen(oldPort, '127.0.0.1', () => resolve(srv))
    })
    try {
      a = await start(rootA, ANY)
      running.push(a)
      const moved = portOf(a)
      expect(moved).not.toBe(oldPort)
      await until('B lists A at its new address', async () => (await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].multiaddr === addrOf(a))

      // A forgets B and restarts (on its new port, kept): only B's redial of the new address
      // brings them together again.
      await ok(call(a.app, 'DELETE', `/v1/peers/${peerB}`), 204)
      await stopGracefully(a.app, 1000)
      running.splice(running.indexOf(a), 1)
      await until('B sees A gone', async () => !(await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].connected)
      a = await start(rootA, ANY)
      running.push(a)
      expect(portOf(a)).toBe(moved)
      const after = (await ok(call(a.app, 'POST', `/v1/spaces/${space.id}/objects`, {}), 201)).objectId
      await until('B redialled A at its new address', async () => (await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].connected)
      await until('B holds what A wrote', () => !!b.engine.account().held(space.id)?.objectDoc(after))
    } finally {
      squatter.close()
    }
  }, 90_000)

  it('when a listed address fails, the peer is looked up by its id (what libp2p learned of it) before the dial gives up (issue 39)', async () => {
    const rootA = mkdtempSync(join(tmpdir(), 'svc-lookA-'))
    const rootB = mkdtempSync(join(tmpdir(), 'svc-lookB-'))
    roots.push(rootA, rootB)
    const ANY = '/ip4/127.0.0.1/tcp/0'
    let a = await start(rootA, ANY)
    running.push(a)
    const created = await ok(call(a.app, 'POST', '/v1/auth', {}), 201)
    const b = await start(rootB, ANY)
    running.push(b)
    await ok(call(b.app, 'POST', '/v1/auth', { mnemonic: created.mnemonic }), 201)
    const port = Number(
      /\/tcp\/(\d+)/.exec(
        a.engine
          .p2p()!
          .node.getMultiaddrs()
          .find((m) => !m.toString().includes('/ws'))!
          .toString(),
      )![1],
    )
    const peerIdA = a.engine.p2p()!.transport.peerId
    const right = `/ip4/127.0.0.1/tcp/${port}/p2p/${peerIdA}`
    await ok(call(b.app, 'POST', '/v1/peers', { multiaddr: right }), 201)
    await until('B sees A connected', async () => (await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].connected)
    // The listed address goes stale (a wrong port) while they are connected, then A restarts:
    // B's dial of the listed address fails, and the address libp2p learned finds A.
    const stale = await new Promise<Server>((resolve, reject) => {
      const srv = createServer((sock) => sock.destroy())
      srv.once('error', reject)
      srv.listen(0, '127.0.0.1', () => resolve(srv))
    })
    try {
      const wrong = `/ip4/127.0.0.1/tcp/${(stale.address() as { port: number }).port}/p2p/${peerIdA}`
      await ok(call(b.app, 'POST', '/v1/peers', { multiaddr: wrong }), 200)
      await stopGracefully(a.app, 1000)
      running.splice(running.indexOf(a), 1)
      await until('B sees A gone', async () => !(await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].connected)
      a = await start(rootA, ANY)
      running.push(a)
      await until('B found A by its id', async () => (await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].connected)
      expect((await ok(call(b.app, 'GET', '/v1/peers'))).peers[0].multiaddr).toBe(right)
    } finally {
      stale.close()
    }
  }, 90_000)
})
