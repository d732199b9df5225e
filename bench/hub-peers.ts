/**
 * The peers of the hub benchmark's third part (bench/hub.ts), run as a child process of their
 * own so that their CPU is not the hub's: `node --import tsx bench/hub-peers.ts CONFIG_JSON`.
 *
 * Each peer is a libp2p node (TCP, Noise, Yamux, identify: the options every svc node shares,
 * sync/p2p/node-options.ts) with a head-sync session and driver as a daemon has, for its own
 * account. Peer i holds spaces i % S and (i + 37) % S; space s is owned by peer s, which
 * creates it (three writer members, three objects), registers it with the hub over the control
 * protocol and brings it there; the other peers then get it from the hub. Then every peer writes
 * one change to one of its spaces every `writeEveryMs` (staggered) and pushes it with a round;
 * the hub relays it to the space's other connected readers. Peers dial from 127.0.0.2 upwards,
 * a few per address, as peers on other hosts would (libp2p refuses more than five inbound
 * connections a second from one host).
 *
 * stdout: one JSON line per phase ({phase: 'seeded', ...}, then {phase: 'done', ...} once a
 * line arrives on stdin).
 */
import { createLibp2p } from 'libp2p'
import { tcp } from '@libp2p/tcp'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr } from '@multiformats/multiaddr'
import { identityOf, keyPairFromSeed, type KeyPair } from '../sync/crypto/keys.ts'
import { systemEnv } from '../sync/core/env.ts'
import { SpaceReplica } from '../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import { SyncSession } from '../sync/protocol/session.ts'
import { SyncDriver } from '../sync/protocol/sync-driver.ts'
import { Libp2pTransport } from '../sync/p2p/libp2p-transport.ts'
import { svcNodeOptions } from '../sync/p2p/node-options.ts'
import { P2P } from '../sync/p2p/constants.ts'
import { decodeHubMessage, encodeHubMessage, HUB_WIRE } from '../sync/protocol/hub-wire.ts'
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { realTimer } from '../node/p2p/real-timer.ts'
import { readOneFrame, writeFrame } from '../node/push/rpc.ts'

export interface PeersConfig {
  hub: { addr: string; peerId: string; identity: string }
  peers: number
  spaces: number
  writeEveryMs: number
}

const seeded = (tag: number, i: number): KeyPair => {
  const seed = new Uint8Array(32)
  seed[0] = tag
  new DataView(seed.buffer).setUint32(1, i)
  return keyPairFromSeed(seed)
}
/** Peer i's account; peer s < spaces owns space s. */
export const accountKey = (i: number): KeyPair => seeded(0xa1, i)
const deviceKey = (i: number): KeyPair => seeded(0xd1, i)
/** The spaces peer i holds (indexes); their readers are the peers that hold them. */
export const spacesOf = (i: number, spaces: number): number[] => [i % spaces, (i + 37) % spaces]

type TcpDialOpts = NonNullable<NonNullable<Parameters<typeof tcp>[0]>['dialOpts']>
const crypto = nodeCryptoProvider({ verify: 'threadpool' })
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] * 10) / 10 : null
}
const out = (o: object) => process.stdout.write(JSON.stringify(o) + '\n')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Runs fn over 0..n-1, `concurrency` at a time. */
async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      while (next < n) await fn(next++)
    }),
  )
}

interface Peer {
  i: number
  key: KeyPair
  node: Awaited<ReturnType<typeof createLibp2p>>
  driver: SyncDriver
  replicas: Map<string, SpaceReplica>
}

async function startPeer(i: number, hubIdentity: string): Promise<Peer> {
  const privateKey = await generateKeyPairFromSeed('Ed25519', deviceKey(i).privateKey)
  // 127.0.0.2 upwards, four peers per address.
  const localAddress = `127.0.${(2 + (i >> 2)) >> 8}.${(2 + (i >> 2)) % 256}`
  const node = await createLibp2p(
    svcNodeOptions({
      privateKey,
      listen: [],
      // @libp2p/tcp hands dialOpts to net.connect as they are; its type names only a few of them.
      transports: [tcp({ dialOpts: { localAddress } as TcpDialOpts })],
      maxConnections: 8,
      connectionGater: {},
    }),
  )
  const transport = await Libp2pTransport.start(node)
  const replicas = new Map<string, SpaceReplica>()
  const key = accountKey(i)
  const session = new SyncSession({
    host: { space: (id) => replicas.get(id), custodian: (_s, id) => id === hubIdentity },
    key,
    peerId: transport.peerId,
    crypto,
    env: systemEnv,
    ingestAhead: P2P.ingestAhead,
  })
  const driver = new SyncDriver({ transport, session, timer: realTimer, timeoutMs: 120_000 })
  return { i, key, node, driver, replicas }
}

async function syncUntilInSync(p: Peer, hubPeer: string, spaceId: string) {
  for (let rounds = 0; rounds < 20; rounds++) {
    const r = await p.driver.syncSpace(hubPeer, spaceId)
    if (r.outcome === 'in_sync') return
    if (!r.ok && r.outcome !== 'busy') throw new Error(`peer ${p.i}: round failed: ${r.outcome} ${r.error ?? ''}`)
  }
  throw new Error(`peer ${p.i}: no in_sync after 20 rounds`)
}

/** Registers a space over the hub's control protocol; retried while the hub has not seen the link's proof yet. */
async function register(p: Peer, hubPeer: string, spaceId: string) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const stream = await p.node.dialProtocol(peerIdFromString(hubPeer), HUB_WIRE.protocol, { signal: AbortSignal.timeout(30_000) })
    writeFrame(stream, encodeHubMessage({ kind: 'register', reqId: attempt + 1, token: new Uint8Array(0), spaceIds: [spaceId] }))
    const reply = decodeHubMessage(await readOneFrame(stream, HUB_WIRE.maxFrameBytes, 30_000))
    await stream.close().catch(() => undefined)
    if (reply.kind === 'status' && reply.code === 'ok') return
    await sleep(100)
  }
  throw new Error(`peer ${p.i}: registration refused`)
}

async function main() {
  const cfg = JSON.parse(process.argv[2]) as PeersConfig
  const { hub } = cfg
  const t0 = performance.now()
  const peers: Peer[] = []
  for (let i = 0; i < cfg.peers; i++) peers.push(await startPeer(i, hub.identity))
  const startedMs = performance.now() - t0

  // Connect, at most 8 dials at once (the hub takes 10 unfinished inbound handshakes at a time).
  let t = performance.now()
  const connectMs: number[] = []
  const failed: string[] = []
  await pool(peers.length, 8, async (k) => {
    const p = peers[k]
    const t1 = performance.now()
    try {
      await p.node.dial(multiaddr(hub.addr), { signal: AbortSignal.timeout(30_000) })
      if (!(await p.driver.authenticate(hub.peerId))) throw new Error('the hub did not prove itself')
      connectMs.push(performance.now() - t1)
    } catch (err) {
      failed.push(`${p.i}: ${(err as Error).message}`)
    }
  })
  const connectAllMs = performance.now() - t
  const live = peers.filter((p) => p.node.getConnections().some((c) => c.remotePeer.toString() === hub.peerId))

  // Seed: owners create, register and bring their spaces; then every reader fetches its own.
  t = performance.now()
  const spaceIds: string[] = []
  const owners = peers.slice(0, cfg.spaces)
  const readersOf = new Map<number, number[]>()
  for (const p of peers) for (const s of spacesOf(p.i, cfg.spaces)) readersOf.set(s, [...(readersOf.get(s) ?? []), p.i])
  for (const o of owners) {
    const r = await SpaceReplica.create({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv }, o.key)
    for (const m of readersOf.get(o.i)!) if (m !== o.i) await r.addMember(identityOf(accountKey(m).publicKey), 'writer')
    for (let k = 0; k < 3; k++) {
      const obj = await r.createObject()
      await r.write(obj, [{ op: 'set', ds: '', id: '', path: 'title', value: `object ${k}` }])
    }
    o.replicas.set(r.spaceId, r)
    spaceIds[o.i] = r.spaceId
  }
  await pool(owners.length, 16, async (k) => {
    const o = owners[k]
    if (!live.includes(o)) return
    await register(o, hub.peerId, spaceIds[o.i])
    await syncUntilInSync(o, hub.peerId, spaceIds[o.i])
  })
  await pool(live.length, 16, async (k) => {
    const p = live[k]
    for (const s of spacesOf(p.i, cfg.spaces)) {
      if (p.replicas.has(spaceIds[s])) continue
      const r = await SpaceReplica.open({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv }, spaceIds[s], p.key)
      p.replicas.set(r.spaceId, r)
      await syncUntilInSync(p, hub.peerId, r.spaceId)
    }
  })
  const seedMs = performance.now() - t
  out({
    phase: 'seeded',
    peers: peers.length,
    connected: live.length,
    failed: failed.slice(0, 5),
    failedCount: failed.length,
    startPeersMs: Math.round(startedMs),
    connectAllMs: Math.round(connectAllMs),
    connectP50Ms: pct(connectMs, 50),
    connectP99Ms: pct(connectMs, 99),
    seedMs: Math.round(seedMs),
    rssMB: Math.round(process.memoryUsage().rss / 1e6),
  })

  // Steady: writes, each pushed to the hub; the hub relays them to the other readers.
  const writtenAt = new Map<string, number>()
  const relayMs: number[] = []
  const pushMs: number[] = []
  const errors: string[] = []
  let writes = 0
  /** Arrivals the writes should make: one at every other connected reader of the space. */
  let expected = 0
  const liveReaders = new Map<string, number>()
  for (let s = 0; s < cfg.spaces; s++) liveReaders.set(spaceIds[s], (readersOf.get(s) ?? []).filter((i) => live.includes(peers[i])).length)
  for (const p of live)
    for (const r of p.replicas.values())
      r.addCommitListener((info) => {
        if (info.local) return
        const now = performance.now()
        for (const id of info.changeIds) {
          const at = writtenAt.get(id)
          if (at !== undefined) relayMs.push(now - at)
        }
      })
  let running = true
  process.stdin.once('data', () => (running = false))
  t = performance.now()
  await Promise.all(
    live.map(async (p) => {
      await sleep(Math.random() * cfg.writeEveryMs)
      let n = 0
      while (running) {
        const r = [...p.replicas.values()][n++ % p.replicas.size]
        const obj = r.treeIds().find((x) => x !== r.spaceId)
        if (obj) {
          try {
            const w = await r.write(obj, [{ op: 'set', ds: '', id: '', path: 'title', value: `peer ${p.i} write ${n}` }])
            writtenAt.set(w.changeId, performance.now())
            writes++
            expected += (liveReaders.get(r.spaceId) ?? 1) - 1
            const t1 = performance.now()
            const res = await p.driver.syncSpace(hub.peerId, r.spaceId)
            if (res.ok) pushMs.push(performance.now() - t1)
            else if (errors.length < 20) errors.push(`${p.i}: ${res.outcome} ${res.error ?? ''}`)
          } catch (err) {
            if (errors.length < 20) errors.push(`${p.i}: ${(err as Error).message}`)
          }
        }
        const until = performance.now() + cfg.writeEveryMs
        while (running && performance.now() < until) await sleep(Math.min(250, until - performance.now()))
      }
    }),
  )
  const steadyMs = performance.now() - t
  // Every reader of a space should hold every write to it, through the hub alone.
  await sleep(2_000)
  let converged = 0
  for (let s = 0; s < cfg.spaces; s++) {
    const rs = (readersOf.get(s) ?? []).map((i) => peers[i]).filter((p) => live.includes(p))
    const heads = rs.map((p) => {
      const r = p.replicas.get(spaceIds[s])!
      return r
        .treeIds()
        .sort()
        .map((x) => `${x}:${[...r.heads(x)].sort().join(',')}`)
        .join(';')
    })
    if (heads.every((h) => h === heads[0])) converged++
  }
  out({
    phase: 'done',
    steadyMs: Math.round(steadyMs),
    writes,
    writesPerSec: Math.round((writes / steadyMs) * 1000 * 10) / 10,
    pushP50Ms: pct(pushMs, 50),
    pushP99Ms: pct(pushMs, 99),
    relayed: relayMs.length,
    relaysExpected: expected,
    relayP50Ms: pct(relayMs, 50),
    relayP99Ms: pct(relayMs, 99),
    spacesConverged: converged,
    errors: errors.slice(0, 5),
    errorCount: errors.length,
    rssMB: Math.round(process.memoryUsage().rss / 1e6),
  })
  await Promise.all(peers.map((p) => p.driver.close().then(() => p.node.stop()))).catch(() => undefined)
  process.exit(0)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    process.stderr.write(`[bench hub peers] ${(err as Error).stack ?? String(err)}\n`)
    process.exit(1)
  })
}
