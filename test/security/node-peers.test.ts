import { randomBytes } from 'node:crypto'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeCryptoProvider } from '../../node/crypto/node-provider.ts'
import { P2PService } from '../../node/daemon/p2p-service.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import type { SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { identityOf, keyPairFromSeed, type KeyPair } from '../../sync/crypto/keys.ts'
import { encodeMessage } from '../../sync/protocol/messages.ts'
import { SyncSession } from '../../sync/protocol/session.ts'
import { SyncDriver } from '../../sync/protocol/sync-driver.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { realTimer } from '../../node/daemon/p2p-service.ts'
import { headSyncStream, pour, startTargetDaemon, stranger, type TargetDaemon } from './node-daemon.ts'

const freshKey = (): KeyPair => keyPairFromSeed(new Uint8Array(randomBytes(32)))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const frames = (msgs: Uint8Array[]) => msgs.map((m) => lp.encode.single(m).subarray())

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}

/**
 * libp2p accepts at most 5 inbound connections per second from one host (all of these tests
 * dial from 127.0.0.1): waiting this long before a dial keeps that limit from answering for the
 * daemon's own decision.
 */
const RATE_WINDOW_MS = 1_100

/** Whether `node` can get a head-sync stream to the daemon that stays open for a moment. */
async function canReach(node: SvcLibp2p, addr: string): Promise<boolean> {
  await sleep(RATE_WINDOW_MS)
  try {
    const s = await headSyncStream(node, addr)
    await sleep(300)
    return s.status === 'open' && node.getConnections().some((c) => c.status === 'open')
  } catch {
    return false
  }
}

const nodes: SvcLibp2p[] = []
afterAll(async () => {
  await Promise.allSettled(
    nodes.map(async (n) => {
      await n.stop()
    }),
  )
})

describe('A peer that sends N malformed or refused messages is disconnected and backed off', () => {
  let d: TargetDaemon
  beforeAll(async () => {
    d = await startTargetDaemon()
  }, 60_000)
  afterAll(async () => d?.close())

  const floodThenCheck = async (payload: Uint8Array[]) => {
    await sleep(RATE_WINDOW_MS)
    const bad = await stranger()
    nodes.push(bad)
    const s = await headSyncStream(bad, d.addr)
    await pour(s, frames(payload))
    // The daemon hangs up on it...
    await until('the daemon to hang up', () => bad.getConnections().length === 0)
    // ...and refuses it when it comes back,
    expect(await canReach(bad, d.addr)).toBe(false)
    // while a peer that did nothing wrong still gets in.
    const good = await stranger()
    nodes.push(good)
    expect(await canReach(good, d.addr)).toBe(true)
    await good.stop()
  }

  it('malformed messages (valid frames of junk) past the limit: hung up, refused on reconnect', async () => {
    await floodThenCheck(Array.from({ length: 2 * P2P.maxPeerFaults }, (_, i) => new Uint8Array([0xff, i & 0xff, 0x00])))
  }, 60_000)

  it('refused messages (well-formed sync requests from a peer that never authenticates) past the limit: hung up, refused on reconnect', async () => {
    const spaceId = identityOf(freshKey().publicKey)
    const msgs = Array.from({ length: 2 * P2P.maxPeerFaults }, (_, i) => encodeMessage({ type: 'sync', spaceId, req: i + 1, fp: new Uint8Array(8), count: 1 }))
    await floodThenCheck(msgs)
  }, 60_000)

  it('an empty frame: hung up at once', async () => {
    await sleep(RATE_WINDOW_MS)
    const bad = await stranger()
    nodes.push(bad)
    const s = await headSyncStream(bad, d.addr)
    await pour(s, [new Uint8Array([0])])
    await until('the daemon to hang up', () => bad.getConnections().length === 0)
    expect(await canReach(bad, d.addr)).toBe(false)
  }, 60_000)
})

describe('Per-peer maps grow without bound and strangers mint peer ids for free', () => {
  const BOUND = 4
  let svc: P2PService
  let account: AccountEngine
  const crypto = nodeCryptoProvider({ verify: 'sync' })
  beforeAll(async () => {
    account = await AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv, accountKey: freshKey() })
    await account.createSpace({ name: 'shared with nobody' })
    svc = await P2PService.start({
      account,
      keys: { account: freshKey(), device: freshKey(), index: 1 },
      crypto,
      env: systemEnv,
      mdns: false,
      listen: ['/ip4/127.0.0.1/tcp/0'],
      roundTimeoutMs: 400,
      authTimeoutMs: 1_500,
      guard: { maxTracked: BOUND },
      scheduler: { maxPeerStatsPerSpace: BOUND, periodMs: 60_000 },
    })
  })
  afterAll(async () => {
    await svc?.stop()
    await account?.close()
  })
  const addr = () => svc.node.getMultiaddrs()[0].toString()

  it('strangers that never authenticate leave no per-peer statistics behind and are hung up on', async () => {
    const strangers: SvcLibp2p[] = []
    for (let i = 0; i < 3 * BOUND; i++) {
      const s = await stranger()
      strangers.push(s)
      nodes.push(s)
      await s.dial(multiaddr(addr()))
      await sleep(450) // well under libp2p's 5 inbound connections per second per host
    }
    // Every stranger got rounds (challenges it never answered) and is gone after the auth timeout.
    await until('every silent stranger hung up on', () => strangers.every((s) => s.getConnections().length === 0), 15_000)
    for (const [, perSpace] of svc.scheduler.stats) expect(perSpace.size).toBeLessThanOrEqual(BOUND)
    expect(svc.scheduler.connectedPeers()).toEqual([])
  }, 60_000)

  it('authenticated strangers with fresh accounts: no round and no statistics about a space they may not read', async () => {
    let authenticated = 0
    for (let i = 0; i < 3 * BOUND; i++) {
      const node = await stranger()
      nodes.push(node)
      const transport = await Libp2pTransport.start(node)
      const session = new SyncSession({ host: { space: () => undefined }, key: freshKey(), peerId: transport.peerId, crypto, env: systemEnv })
      const driver = new SyncDriver({ transport, session, timer: realTimer, timeoutMs: 2_000 })
      await node.dial(multiaddr(addr()))
      // The daemon proves the stranger's account, then opens no round with it: rights before work.
      const proved = () => svc.session.identityOf(transport.peerId) !== undefined
      await until('the stranger authenticated', proved).then(
        () => authenticated++,
        () => undefined,
      )
      await sleep(300)
      expect([...svc.scheduler.stats.values()].some((m) => m.has(transport.peerId))).toBe(false)
      await driver.close()
      await node.stop()
      await sleep(450)
    }
    expect(authenticated).toBeGreaterThan(BOUND)
    for (const [, perSpace] of svc.scheduler.stats) expect(perSpace.size).toBeLessThanOrEqual(BOUND)
  }, 120_000)

  it('misbehaving strangers: the back-off table holds at most the bound', async () => {
    for (let i = 0; i < 2 * BOUND; i++) {
      const bad = await stranger()
      nodes.push(bad)
      const s = await headSyncStream(bad, addr())
      await pour(s, [new Uint8Array([0])])
      await until('hung up', () => bad.getConnections().length === 0)
      await bad.stop()
      await sleep(450)
    }
    expect(svc.guard.backoffs).toBe(2 * BOUND)
    expect(svc.guard.tracked).toBeLessThanOrEqual(BOUND)
  }, 60_000)
})
