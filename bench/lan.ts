/**
 * LAN sync benchmark (issue: P2P node). A 100,000-change backlog synced between two endpoints
 * over libp2p on loopback (TCP + Noise + Yamux), against raw libp2p stream throughput of the
 * same bytes in the same run; and, inside the network namespace only (mDNS), the time from
 * discovery to the first completed round.
 */
import { bareOpenVerifyMs, buildFixture } from './core.ts'
import { SpaceReplica } from '../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { keyPairFromSeed, type KeyPair } from '../sync/crypto/keys.ts'
import { systemEnv } from '../sync/core/env.ts'
import { SyncSession } from '../sync/protocol/session.ts'
import { SyncDriver } from '../sync/protocol/sync-driver.ts'
import { createSvcNode } from '../node/p2p/libp2p-node.ts'
import { Libp2pTransport } from '../sync/p2p/libp2p-transport.ts'
import { realTimer, P2PService } from '../node/daemon/p2p-service.ts'
import { P2P } from '../sync/p2p/constants.ts'
import { AccountEngine } from '../sync/space/account-engine.ts'
import * as lp from 'it-length-prefixed'

const progress = (m: string) => process.stderr.write(`[bench lan] ${m}\n`)
// The daemon's provider (node-provider.ts), so the figure is what two daemons achieve.
const crypto = nodeCryptoProvider({ verify: 'threadpool' })
const account = keyPairFromSeed(new Uint8Array(32).fill(1))
const device = (n: number): KeyPair => keyPairFromSeed(new Uint8Array(32).fill(200 + n))

/** Ingest overlap as the daemon runs it (P2P.ingestAhead); BENCH_LAN_INGEST_AHEAD compares others. */
async function endpoint(replica: SpaceReplica, n: number) {
  const node = await createSvcNode({ deviceKey: device(n), listen: ['/ip4/127.0.0.1/tcp/0'] })
  const transport = await Libp2pTransport.start(node)
  const session = new SyncSession({
    host: { space: (id) => (id === replica.spaceId ? replica : undefined) },
    key: account,
    peerId: transport.peerId,
    crypto,
    env: systemEnv,
    ingestAhead: Number(process.env.BENCH_LAN_INGEST_AHEAD ?? P2P.ingestAhead),
  })
  const driver = new SyncDriver({ transport, session, timer: realTimer, timeoutMs: 600_000 })
  return { node, transport, driver }
}

/** Raw baseline: the same bytes, framed the same way, over one libp2p stream. */
async function rawThroughput(frames: Uint8Array[]): Promise<number> {
  const a = await createSvcNode({ deviceKey: device(10), listen: ['/ip4/127.0.0.1/tcp/0'] })
  const b = await createSvcNode({ deviceKey: device(11), listen: ['/ip4/127.0.0.1/tcp/0'] })
  const total = frames.reduce((n, f) => n + f.length, 0)
  let got = 0
  let done!: () => void
  const finished = new Promise<void>((r) => (done = r))
  await b.handle('/svc/bench-raw/1', (stream) => {
    stream.addEventListener('message', (evt) => {
      got += evt.data.byteLength
      if (got >= total) done()
    })
  })
  await a.dial(b.getMultiaddrs()[0])
  const s = await a.dialProtocol(b.peerId, '/svc/bench-raw/1')
  const encoded = frames.map((f) => lp.encode.single(f).subarray())
  const need = encoded.reduce((n, f) => n + f.length, 0)
  got = 0
  const t0 = performance.now()
  for (const f of encoded) if (!s.send(f)) await s.onDrain()
  await new Promise<void>((resolve) => {
    const check = () => (got >= need ? resolve() : setTimeout(check, 1))
    check()
  })
  void finished
  const ms = performance.now() - t0
  await a.stop()
  await b.stop()
  return ms
}

async function discoveryToFirstRound(): Promise<number | null> {
  if (process.env.NETNS_RUN_INSIDE !== '1') return null
  const engines = await Promise.all(
    [1, 2].map((n) => AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv, accountKey: account }).then((a) => ({ a, n }))),
  )
  const services: P2PService[] = []
  let firstRoundAt = 0
  for (const { a, n } of engines) {
    const p = await P2PService.start({
      account: a,
      keys: { account, device: device(20 + n), index: 1 },
      crypto,
      env: systemEnv,
      mdns: true,
      listen: ['/ip4/127.0.0.1/tcp/0'],
      scheduler: { periodMs: 60_000 },
    })
    p.scheduler.onRound((e) => {
      if (e.phase === 'end' && e.result?.ok && !firstRoundAt) firstRoundAt = Date.now()
    })
    services.push(p)
  }
  const t0 = Date.now()
  while (!firstRoundAt && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 5))
  const discovered = Math.min(...services.flatMap((s) => [...s.discoveredAt.values()]))
  await Promise.all(services.map((s) => s.stop()))
  return firstRoundAt && Number.isFinite(discovered) ? firstRoundAt - discovered : null
}

export async function benchLan(): Promise<Record<string, unknown>> {
  progress('building the backlog')
  const fx = await buildFixture()
  const source = await SpaceReplica.open({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv }, fx.spaceId, account)
  await source.ingest(fx.setup)
  for (let i = 0; i < fx.changes.length; i += 5000) await source.applyVerified(fx.changes.slice(i, i + 5000).map((change) => ({ change })))
  const target = await SpaceReplica.open({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv }, fx.spaceId, account)
  const A = await endpoint(source, 1)
  const B = await endpoint(target, 2)
  const up = new Promise<void>((r) => B.transport.onPeerUp(() => r()))
  await B.node.dial(A.node.getMultiaddrs()[0])
  await up
  progress('syncing the backlog over libp2p')
  const t0 = performance.now()
  let rounds = 0
  for (; rounds < 50; rounds++) {
    const r = await B.driver.syncSpace(A.transport.peerId, fx.spaceId)
    if (r.outcome === 'in_sync') break
    if (!r.ok) throw new Error(`round failed: ${r.outcome} ${r.error ?? ''}`)
  }
  const syncMs = performance.now() - t0
  if ((await target.stateDigest()) !== (await source.stateDigest())) throw new Error('backlog did not converge')
  await Promise.all([A, B].map(async (e) => (await e.driver.close(), await e.transport.close(), await e.node.stop())))
  progress('raw libp2p baseline')
  const frames: Uint8Array[] = []
  const all = [...fx.setup.map((s) => s.raw), ...fx.changes.map((c) => c.raw)]
  // Frames of ~1,000 changes, as sync batches them.
  for (let i = 0; i < all.length; i += 1000) {
    const part = all.slice(i, i + 1000)
    const buf = new Uint8Array(part.reduce((n, p) => n + p.length, 0))
    let o = 0
    for (const p of part) {
      buf.set(p, o)
      o += p.length
    }
    frames.push(buf)
  }
  const rawMs = await rawThroughput(frames)
  // What no sync of these bytes can beat: every received change must be opened and its
  // signature verified (a forged change is never applied), here as a bare loop on the same
  // provider, parallel on the thread pool like ingest.
  progress('verify + open bound')
  const cryptoMs = await bareOpenVerifyMs(fx, crypto, 1000)
  progress('discovery to first round (mDNS, netns only)')
  const discovery = await discoveryToFirstRound()
  const n = fx.changes.length
  return {
    changes: n,
    bytes: all.reduce((s, b) => s + b.length, 0),
    syncMs: Math.round(syncMs),
    rounds: rounds + 1,
    lanBacklogChangesPerSec: Math.round(n / (syncMs / 1000)),
    rawStreamMs: Math.round(rawMs),
    lanBacklogVsRawStream: Math.round((rawMs / syncMs) * 1000) / 1000,
    cryptoBoundMs: Math.round(cryptoMs),
    // The best lanBacklogVsRawStream any correct sync could reach on this machine.
    rawStreamVsCryptoBound: Math.round((rawMs / cryptoMs) * 1000) / 1000,
    lanBacklogVsCryptoBound: Math.round((cryptoMs / syncMs) * 1000) / 1000,
    discoveryToFirstRoundMs: discovery,
    ...(discovery === null ? { discoveryNote: 'measured only inside scripts/netns-run.sh (mDNS)' } : {}),
  }
}
