import type { Env } from '../../sync/core/env.ts'
import { nextTurn } from '../../sync/core/turns.ts'
import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import type { WalletKeys } from '../../sync/crypto/wallet.ts'
import { SyncSession } from '../../sync/protocol/session.ts'
import { SyncDriver, type RoundResult, type Timer } from '../../sync/protocol/sync-driver.ts'
import type { Transport } from '../../sync/protocol/transport.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import { createSvcNode, type SvcLibp2p } from '../p2p/libp2p-node.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { BoundedMap } from '../../sync/protocol/bounded-map.ts'
import { PeerGuard } from '../../sync/p2p/peer-guard.ts'
import type { PeerCounters } from '../../sync/protocol/session.ts'
import { ScheduledPeers, SyncScheduler, type SchedulerOptions } from '../../sync/protocol/sync-scheduler.ts'
import type { JoinHandler } from '../../sync/protocol/join-responder.ts'
import { WireSharing } from '../../sync/protocol/sharing-wire.ts'
import { AddedPeers } from '../p2p/added-peers.ts'
import { PeerBook } from '../p2p/peer-book.ts'
import type { Durability } from '../account/files.ts'
import type { PeerTrust } from '../p2p/protocols/protocol.ts'

export interface P2POptions {
  account: AccountEngine
  keys: WalletKeys
  crypto: CryptoProvider
  env: Env
  mdns: boolean
  listen?: string[]
  scheduler?: SchedulerOptions
  /** Round timeout (default 10 s). */
  roundTimeoutMs?: number
  /** Overrides of the misbehaviour limits (tests use small ones). */
  guard?: { maxFaults?: number; backoffBaseMs?: number; maxTracked?: number }
  /** A connected peer with no proved account after this long is hung up on (default P2P.authTimeoutMs). */
  authTimeoutMs?: number
  /** Takes join requests of other accounts for spaces we hold (default: the held replica's). */
  joins?: JoinHandler
  /** Retry delays of our own joins (tests shorten them). */
  joinRetry?: { baseMs?: number; maxMs?: number }
  /** Where peers added by address are kept (the account directory's P2P.peersFile); absent: not kept. */
  peersFile?: string
  /** Peers the configuration names (multiaddrs with /p2p/<id>), dialled for this run. */
  configPeers?: readonly string[]
  /** Redial delays of added peers (tests shorten them). */
  redial?: { baseMs?: number; maxMs?: number }
  durability?: Durability
}

export const realTimer: Timer = {
  after(ms, fn) {
    const t = setTimeout(fn, ms)
    t.unref?.()
    return () => clearTimeout(t)
  },
  yield: nextTurn,
}

/** Malformed or refused messages a peer has sent so far, by the session's counters. */
function faultsIn(c: PeerCounters | undefined): number {
  if (!c) return 0
  let n = c.denied
  for (const k in c.dropped) n += c.dropped[k]
  for (const k in c.rejected) n += c.rejected[k]
  return n
}

/**
 * Join requests go to the replica of the space, when we hold it and it can take them (the ACL
 * records of sharing); the tech space is never joined.
 */
function heldReplicaJoins(account: AccountEngine): JoinHandler {
  return {
    async accept(spaceId, raw, fromIdentity) {
      const held = account.held(spaceId)
      if (!held || held === account.tech) return undefined
      return held.replica.ingestJoin(raw, fromIdentity)
    },
  }
}

/**
 * A Transport whose peer events also reach the scheduler (a transport has one handler each),
 * and whose every message runs through `scored` (which counts the faults it caused).
 */
function tap(t: Transport, up: (p: string) => void, down: (p: string) => void, scored: (p: string, run: () => Promise<void>) => Promise<void>): Transport {
  return {
    get peerId() {
      return t.peerId
    },
    get maxFrameBytes() {
      return t.maxFrameBytes
    },
    get ordered() {
      return t.ordered
    },
    send: (p, b) => t.send(p, b),
    // Backpressure passes through: without it replies would overflow the peer's stream.
    drain: (p) => t.drain?.(p),
    onMessage: (h) => t.onMessage((from, bytes) => scored(from, async () => void (await h(from, bytes)))),
    // A hint only: the frame is scored when it is delivered.
    ...(t.onUpcoming ? { onUpcoming: (h: (from: string, bytes: Uint8Array) => void) => t.onUpcoming!(h) } : {}),
    onPeerUp: (h) =>
      t.onPeerUp(async (p) => {
        await h(p)
        up(p)
      }),
    onPeerDown: (h) =>
      t.onPeerDown(async (p) => {
        down(p)
        await h(p)
      }),
    peers: () => t.peers(),
    close: () => t.close(),
  }
}

/**
 * The daemon's P2P side: a libp2p node keyed by the device key, head sync over it for every
 * space the account holds, and the scheduler deciding when rounds run. Another device of the
 * same account is let in to any space of the account (that is how a second device receives
 * everything); other accounts get only spaces whose ACL lets them read.
 */
export class P2PService {
  private constructor(
    readonly node: SvcLibp2p,
    readonly transport: Libp2pTransport,
    readonly session: SyncSession,
    readonly driver: SyncDriver,
    readonly scheduler: SyncScheduler,
    private readonly stopListening: Array<() => void>,
    /** When each LAN peer was first discovered (ms), for discovery-to-sync timing (LRU-bounded). */
    readonly discoveredAt: BoundedMap<string, number>,
    private readonly mdnsOn: boolean,
    /** Misbehaving peers, disconnected and backed off. */
    readonly guard: PeerGuard,
    /** Joins and offers over the wire (the account engine's SharingNetwork). */
    readonly sharing: WireSharing,
    /** Peers beyond the LAN, added by address and redialled. */
    readonly peers: AddedPeers,
    /** What head sync proved about peers, for the protocols beside it (node/p2p/protocols). */
    readonly trust: PeerTrust,
  ) {}

  static async start(o: P2POptions): Promise<P2PService> {
    // First: a bad configured address fails the boot before anything listens.
    const book = new PeerBook(o.peersFile, o.configPeers ?? [], () => o.env.now(), o.durability)
    const guard = new PeerGuard({ now: () => o.env.now(), ...o.guard })
    const node = await createSvcNode({ deviceKey: o.keys.device, mdns: o.mdns, listen: o.listen, refuse: (p) => guard.refused(p) })
    // Anyone on the LAN can announce fresh peer ids: only the most recent ones are remembered.
    const discoveredAt = new BoundedMap<string, number>(o.guard?.maxTracked ?? P2P.maxTrackedPeers)
    node.addEventListener('peer:discovery', (evt) => {
      const id = evt.detail.id.toString()
      if (!discoveredAt.has(id)) discoveredAt.set(id, o.env.now())
    })
    const hangUp = (peer: string) => {
      for (const c of node.getConnections()) if (c.remotePeer.toString() === peer) c.abort(new Error('peer backed off for misbehaving'))
    }
    const transport = await Libp2pTransport.start(node)
    transport.setPeerFilter((p) => guard.refused(p))
    // Bad framing is never an accident: a full score at once.
    transport.onPeerFault((peer) => guard.fault(peer, guard.maxFaults) && hangUp(peer))
    const account = o.account
    let sharing!: WireSharing
    const session = new SyncSession({
      host: {
        space: (spaceId) => account.held(spaceId)?.replica,
        // Spaces of this account that this device has not opened yet: only for the account itself.
        accept: async (spaceId, identity) => (identity === account.accountId ? (await account.adopt(spaceId).catch(() => undefined))?.replica : undefined),
      },
      key: o.keys.account,
      peerId: transport.peerId,
      crypto: o.crypto,
      env: o.env,
      ingestAhead: P2P.ingestAhead,
      joins: o.joins ?? heldReplicaJoins(account),
      offered: (spaceId, identity, peer) => sharing.offered(spaceId, identity, peer),
    })
    let scheduler!: SyncScheduler
    const scored = async (peer: string, run: () => Promise<void>) => {
      const before = faultsIn(session.allCounters().get(peer))
      await run()
      if (faultsIn(session.allCounters().get(peer)) > before && guard.fault(peer)) hangUp(peer)
    }
    let scheduled!: ScheduledPeers
    const stops: Array<() => void> = []
    const tapped = tap(transport, (p) => scheduled.up(p), (p) => scheduled.down(p), scored)
    const driver = new SyncDriver({ transport: tapped, session, timer: realTimer, timeoutMs: o.roundTimeoutMs })
    scheduled = new ScheduledPeers(() => scheduler, session, () => transport.peers())
    sharing = new WireSharing({ session, driver, timer: realTimer, peers: () => transport.peers(), retryBaseMs: o.joinRetry?.baseMs, retryMaxMs: o.joinRetry?.maxMs })
    stops.push(() => sharing.close())
    scheduler = new SyncScheduler(driver, () => account.openSpaces().map((s) => s.spaceId), realTimer, () => o.env.now(), o.scheduler)
    const watch = (spaceEngine: ReturnType<AccountEngine['openSpaces']>[number]) =>
      stops.push(spaceEngine.replica.addCommitListener((info) => scheduler.changed(spaceEngine.spaceId, info.local)))
    for (const s of account.openSpaces()) watch(s)
    stops.push(
      account.events.on('spacesOpened', ({ spaceIds: ids }) => {
        for (const id of ids) {
          const s = account.held(id)
          if (s) watch(s)
        }
        scheduler.spacesAdded(ids)
      }),
    )
    // A connection that never proves an account only holds a slot: hang up on it.
    const authTimeout = o.authTimeoutMs ?? P2P.authTimeoutMs
    const onConnect = (evt: CustomEvent<{ toString(): string }>) => {
      const peer = evt.detail.toString()
      realTimer.after(authTimeout, () => {
        if (!session.identityOf(peer) && node.getConnections().some((c) => c.remotePeer.toString() === peer)) hangUp(peer)
      })
    }
    node.addEventListener('peer:connect', onConnect)
    stops.push(() => node.removeEventListener('peer:connect', onConnect))
    // Peers whose link came up before the driver listened: their rounds authenticate them.
    for (const p of transport.peers()) scheduled.adopt(p)
    stops.push(() => scheduled.stop())
    const peers = new AddedPeers(node, book, (p) => session.identityOf(p), realTimer, () => o.env.now(), o.redial)
    stops.push(() => peers.stop())
    // Protocols beside head sync trust only what head sync proved, and share its guard.
    const trust: PeerTrust = {
      identityOf: (p) => session.identityOf(p),
      refused: (p) => guard.refused(p),
      fault: (p, w) => void (guard.fault(p, w === 'max' ? guard.maxFaults : 1) && hangUp(p)),
    }
    return new P2PService(node, transport, session, driver, scheduler, stops, discoveredAt, o.mdns, guard, sharing, peers, trust)
  }

  /** Whether LAN discovery runs. */
  get mdns(): boolean {
    return this.mdnsOn
  }

  /** Peers found on the LAN (mDNS) since boot, with when, and whether connected now. */
  discovered() {
    const connected = new Set(this.scheduler.connectedPeers())
    return [...this.discoveredAt].map(([peerId, at]) => ({ peerId, discoveredAt: { $date: new Date(at).toISOString() }, connected: connected.has(peerId) }))
  }

  /** A round with every connected peer about the space; resolves when all are done. */
  syncNow(spaceId: string): Promise<RoundResult[]> {
    return this.scheduler.syncNow(spaceId)
  }

  /** Own peer id, listen addresses, and each connected peer with the spaces synced with it. */
  snapshot() {
    const offers = this.session.offers
    const sharing = {
      joining: this.sharing.joining(),
      offers: { taken: offers?.stats.taken ?? 0, dropped: offers?.stats.dropped ?? 0, running: offers?.running ?? 0 },
    }
    const spacesOf = (peer: string) => [...this.scheduler.stats].filter(([, m]) => m.get(peer)?.lastSyncAt).map(([s]) => s).sort()
    return {
      peerId: this.transport.peerId,
      listen: this.node.getMultiaddrs().map((m) => m.toString()),
      peers: this.scheduler.connectedPeers().map((peerId) => ({
        peerId,
        identity: this.session.identityOf(peerId) ?? null,
        addresses: this.node.getConnections().filter((c) => c.remotePeer.toString() === peerId).map((c) => c.remoteAddr.toString()),
        spaces: spacesOf(peerId),
      })),
      sharing,
    }
  }

  async stop(): Promise<void> {
    this.scheduler.stop()
    for (const s of this.stopListening) s()
    await this.driver.close()
    await this.transport.close()
    await this.node.stop()
  }
}
