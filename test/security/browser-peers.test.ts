/**
 * Browser peers reach the daemon over WebSockets (issue 17). They are peers like any other:
 * the same connection gater, peer guard, head-sync transport and limits see them; only the
 * socket differs, and the socket adds one thing of its own to bound (whole WebSocket messages
 * buffered before libp2p reads them). The peers here are Node libp2p nodes that speak only
 * WebSockets, as a page does, and a bare WebSocket that speaks nothing at all.
 */
import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { createLibp2p } from 'libp2p'
import { webSockets } from '@libp2p/websockets'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_WS_LISTEN, withWebSocketListen, type SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { pour, startTargetDaemon, type TargetDaemon } from './node-daemon.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 15_000) {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}
/** libp2p takes at most 5 inbound connections a second from one host (node-peers.test.ts says why this waits). */
const RATE_WINDOW_MS = 1_100

function varint(n: number): number[] {
  const out: number[] = []
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80)
    n = Math.floor(n / 128)
  }
  out.push(n)
  return out
}

/** host and port of a `/ip4/H/tcp/P/ws/...` address. */
const hostPort = (addr: string) => ({ host: addr.split('/')[2], port: Number(addr.split('/')[4]) })

/** A TCP socket that completed a WebSocket upgrade by hand, so it can send frames no client library would. */
async function rawWebSocket(addr: string): Promise<Socket> {
  const { host, port } = hostPort(addr)
  const sock = connect(port, host)
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', () => resolve())
    sock.once('error', reject)
  })
  sock.write(
    `GET / HTTP/1.1\r\nHost: ${host}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  )
  const head = await new Promise<string>((resolve) => sock.once('data', (b) => resolve(b.toString('latin1'))))
  if (!head.startsWith('HTTP/1.1 101')) throw new Error(`no upgrade: ${head.split('\r\n')[0]}`)
  return sock
}

/** A page's libp2p node, in Node: WebSockets only, a fresh key. */
async function wsPeer(): Promise<SvcLibp2p> {
  const node = await createLibp2p({
    privateKey: await generateKeyPairFromSeed('Ed25519', new Uint8Array(randomBytes(32))),
    transports: [webSockets()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    services: { identify: identify() },
  })
  return node
}

async function wsAddrOf(d: TargetDaemon): Promise<string> {
  const p2p = (await (await fetch(`${d.url}/v1/debug/p2p`)).json()) as { peerId: string; listen: string[] }
  const ws = p2p.listen.find((a) => /\/ws(\/|$)/.test(a))
  if (!ws) throw new Error(`no WebSocket listener: ${p2p.listen.join(' ')}`)
  return ws.includes('/p2p/') ? ws : `${ws}/p2p/${p2p.peerId}`
}

async function canReach(node: SvcLibp2p, addr: string): Promise<boolean> {
  await sleep(RATE_WINDOW_MS)
  try {
    const s = await node.dialProtocol(multiaddr(addr), P2P.headSyncProtocol, { signal: AbortSignal.timeout(10_000) })
    await sleep(300)
    return s.status === 'open' && node.getConnections().some((c) => c.status === 'open')
  } catch {
    return false
  }
}

let d: TargetDaemon
let wsAddr: string
const nodes: SvcLibp2p[] = []
beforeAll(async () => {
  d = await startTargetDaemon()
  wsAddr = await wsAddrOf(d)
}, 60_000)
afterAll(async () => {
  await Promise.allSettled(
    nodes.map(async (n) => {
      await n.stop()
    }),
  )
  await d?.close()
})

describe('The WebSockets listener is reachable from this machine only, unless configured', () => {
  it('with no WebSocket address configured it listens on loopback; a configured one replaces it', async () => {
    expect(wsAddr).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+\/ws\//)
    expect(withWebSocketListen(['/ip4/0.0.0.0/tcp/0'])).toEqual(['/ip4/0.0.0.0/tcp/0', DEFAULT_WS_LISTEN])
    expect(withWebSocketListen(['/ip4/0.0.0.0/tcp/0', '/ip4/0.0.0.0/tcp/9090/ws'])).toEqual(['/ip4/0.0.0.0/tcp/0', '/ip4/0.0.0.0/tcp/9090/ws'])
  })
})

describe('A browser peer that sends malformed messages over WebSockets is disconnected and backed off', () => {
  it('junk frames past the limit: hung up, refused on reconnect; an honest browser peer still gets in', async () => {
    await sleep(RATE_WINDOW_MS)
    const bad = await wsPeer()
    nodes.push(bad)
    const s = await bad.dialProtocol(multiaddr(wsAddr), P2P.headSyncProtocol, { signal: AbortSignal.timeout(10_000) })
    await pour(
      s,
      Array.from({ length: 2 * P2P.maxPeerFaults }, (_, i) => lp.encode.single(new Uint8Array([0xff, i & 0xff, 0x00])).subarray()),
    )
    await until('the daemon to hang up', () => bad.getConnections().length === 0)
    expect(await canReach(bad, wsAddr)).toBe(false)
    const good = await wsPeer()
    nodes.push(good)
    expect(await canReach(good, wsAddr)).toBe(true)
  }, 60_000)

  it('a frame announcing more than the largest frame: hung up at once, refused on reconnect', async () => {
    await sleep(RATE_WINDOW_MS)
    const bad = await wsPeer()
    nodes.push(bad)
    const s = await bad.dialProtocol(multiaddr(wsAddr), P2P.headSyncProtocol, { signal: AbortSignal.timeout(10_000) })
    // A length prefix of maxFrameBytes + 1 and a little of the frame: refused before it is buffered.
    await pour(s, [new Uint8Array([...varint(P2P.maxFrameBytes + 1), 1, 2, 3])])
    await until('the daemon to hang up', () => bad.getConnections().length === 0)
    expect(await canReach(bad, wsAddr)).toBe(false)
  }, 60_000)
})

describe('A WebSocket the transport cannot read', () => {
  const alive = async () => d.served.proc.exitCode === null && (await fetch(`${d.url}/v1/health`)).status === 200

  it('a message larger than any a browser peer sends: that socket is closed (1009) before Noise; the daemon serves on', async () => {
    const { host, port } = hostPort(wsAddr)
    const sock = new WebSocket(`ws://${host}:${port}`)
    await new Promise<void>((resolve, reject) => {
      sock.onopen = () => resolve()
      sock.onerror = () => reject(new Error('WebSocket did not open'))
    })
    const closed = new Promise<number>((resolve) => (sock.onclose = (e) => resolve(e.code)))
    sock.send(new Uint8Array(P2P.maxWebSocketMessageBytes + 1))
    expect(await Promise.race([closed, sleep(15_000).then(() => -1)])).toBe(1009)
    await sleep(200)
    expect(await alive()).toBe(true)
  }, 60_000)

  it('a frame no WebSocket may send (reserved opcode, unmasked): that socket is closed; the daemon serves on', async () => {
    for (const frame of [
      [0x83, 0x80, 1, 2, 3, 4],
      [0x82, 0x01, 0x00],
    ]) {
      const sock = await rawWebSocket(wsAddr)
      const closed = new Promise<void>((resolve) => sock.once('close', () => resolve()))
      sock.write(Buffer.from(frame))
      await Promise.race([closed, sleep(15_000)])
      expect(sock.destroyed || sock.readyState === 'closed').toBe(true)
      await sleep(200)
      expect(await alive()).toBe(true)
    }
  }, 60_000)

  it('a message at the limit is not refused for its size (its content then fails the handshake)', async () => {
    const { host, port } = hostPort(wsAddr)
    const sock = new WebSocket(`ws://${host}:${port}`)
    await new Promise<void>((resolve) => (sock.onopen = () => resolve()))
    const code = new Promise<number>((resolve) => (sock.onclose = (e) => resolve(e.code)))
    sock.send(new Uint8Array(P2P.maxWebSocketMessageBytes))
    expect(await Promise.race([code, sleep(3_000).then(() => -1)])).not.toBe(1009)
    sock.close()
    expect(await alive()).toBe(true)
  }, 60_000)
})
