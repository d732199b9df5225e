import type { Env } from '../../sync/core/env.ts'
import { realTimer } from '../p2p/real-timer.ts'
import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import type { WalletKeys } from '../../sync/crypto/wallet.ts'
import { errField, silentLogger, type Logger } from '../../sync/core/log.ts'
import type { SyncSession } from '../../sync/protocol/session.ts'
import type { RoundResult, SyncDriver } from '../../sync/protocol/sync-driver.ts'
import { SyncStack } from '../../sync/protocol/sync-stack.ts'
import { accountSyncHost, followAccountSpaces } from '../../sync/p2p/account-sync.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import { createSvcNode, DEFAULT_TCP_LISTEN, type SvcLibp2p } from '../p2p/libp2p-node.ts'
import { listeningPort, savedPort, savePort, withSavedPort } from '../p2p/stable-port.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { BoundedMap } from '../../sync/protocol/bounded-map.ts'
import { PeerGuard } from '../../sync/p2p/peer-guard.ts'
import type { SyncScheduler, SchedulerOptions } from '../../sync/protocol/sync-scheduler.ts'
import type { JoinHandler } from '../../sync/protocol/join-responder.ts'
import type { WireSharing } from '../../sync/protocol/sharing-wire.ts'
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
  /** Where the TCP port of the last run is kept (the account directory's P2P.portFile); absent: a port 0 stays random. */
  portFile?: string
  /** Peers the configuration names (multiaddrs with /p2p/<id>), dialled for this run. */
  configPeers?: readonly string[]
  /** Redial delays of added peers (tests shorten them). */
  redial?: { baseMs?: number; maxMs?: number }
  durability?: Durability
  log?: Logger
}

export { realTimer }

/**
 * Join requests go to the replica of the space, when we hold it and it can take them (the ACL
 * records of sharing); the tech space is never joined.
 */
function heldReplicaJoins(account: AccountEngine): JoinHandler {
  return {
    async accept(spaceId, raw, fromIdentity) {
      const held = account.held(spaceId) ?? (account.isClosed(spaceId) ? await account.opened(spaceId) : undefined)
      if (!held || held === account.tech) return undefined
      return held.replica.ingestJoin(raw, fromIdentity)
    },
  }
}

/**
 * The libp2p node, on the TCP port of the last run when the configuration leaves the port to
 * chance (node/p2p/stable-port.ts), else (or when that port is taken) as configured; the port it
 * got is kept for the next start.
 */
async function startNode(o: P2POptions, guard: PeerGuard): Promise<SvcLibp2p> {
  const log = o.log ?? silentLogger
  const nodeOptions = { deviceKey: o.keys.device, mdns: o.mdns, refuse: (p: string) => guard.refused(p), log: log.child('libp2p') }
  const listen = o.listen ?? [...DEFAULT_TCP_LISTEN]
  const again = withSavedPort(listen, savedPort(o.portFile))
  let node: SvcLibp2p
  if (again) {
    try {
      node = await createSvcNode({ ...nodeOptions, listen: again })
    } catch (err) {
      log.warn('the P2P port of the last run is taken; listening on another (peers that added this device by address will not find it there)', {
        listen: again,
        err: errField(err),
      })
      node = await createSvcNode({ ...nodeOptions, listen })
    }
  } else node = await createSvcNode({ ...nodeOptions, listen })
  try {
    savePort(o.portFile, listeningPort(node.getMultiaddrs().map((m) => m.toString())), o.durability)
  } catch (err) {
    log.warn('the P2P port could not be kept for the next start', { err: errField(err) })
  }
  return node
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
    /** Head sync over the transport: session, driver, sharing, scheduler (sync/protocol/sync-stack.ts). */
    readonly stack: SyncStack,
    readonly scheduler: SyncScheduler,
    private readonly stopListening: Array<() => void>,
    /** When each LAN peer was first discovered (ms), for discovery-to-sync timing (LRU-bounded). */
    readonly discoveredAt: BoundedMap<string, number>,
    private readonly mdnsOn: boolean,
    /** Misbehaving peers, disconnected and backed off. */
    readonly guard: PeerGuard,
    /** Peers beyond the LAN, added by address and redialled. */
    readonly peers: AddedPeers,
    /** What head sync proved about peers, for the protocols beside it (node/p2p/protocols). */
    readonly trust: PeerTrust,
    /** Identities of our hubs, filled by the hub links: custodians of our spaces (docs/hub.md). */
    readonly custodians: Set<string>,
  ) {}

  static async start(o: P2POptions): Promise<P2PService> {
    // First: a bad configured address fails the boot before anything listens.
    const book = new PeerBook(o.peersFile, o.configPeers ?? [], () => o.env.now(), o.durability, (o.log ?? silentLogger).child('peers'))
    const guard = new PeerGuard({ now: () => o.env.now(), ...o.guard })
    const node = await startNode(o, guard)
    // Anyone on the LAN can announce fresh peer ids: only the most recent ones are remembered.
    const discoveredAt = new BoundedMap<string, number>(o.guard?.maxTracked ?? P2P.maxTrackedPeers)
    node.addEventListener('peer:discovery', (evt) => {
      const id = evt.detail.id.toString()
      if (!discoveredAt.has(id)) discoveredAt.set(id, o.env.now())
    })
    const hangUp = (peer: string) => {
      for (const c of node.getConnections()) if (c.remotePeer.toString() === peer) c.abort(new Error('peer backed off for misbehaving'))
    }
    const transport = await Libp2pTransport.start(node, { log: (o.log ?? silentLogger).child('head-sync-transport') })
    transport.setPeerFilter((p) => guard.refused(p))
    // Bad framing is never an accident: a full score at once.
    transport.onPeerFault((peer) => guard.fault(peer, guard.maxFaults) && hangUp(peer))
    const account = o.account
    const log = o.log ?? silentLogger
    // Our hubs, once they proved their identities (node/hubs/hub-links.ts): custodians of every
    // space we hold, which they sync as a reader would and cannot read.
    const custodians = new Set<string>()
    const stack = new SyncStack({
      transport,
      session: {
        host: {
          ...accountSyncHost(account, (spaceId, err) => log.warn('a space of this account could not be opened for a device of it', { spaceId, err: errField(err) })),
          custodian: (_spaceId, identity) => custodians.has(identity),
        },
        key: o.keys.account,
        crypto: o.crypto,
        env: o.env,
        ingestAhead: P2P.ingestAhead,
        joins: o.joins ?? heldReplicaJoins(account),
      },
      timer: realTimer,
      roundTimeoutMs: o.roundTimeoutMs,
      spaceIds: () => account.openSpaces().map((s) => s.spaceId),
      faults: {
        fault: (peer) => {
          if (guard.fault(peer)) hangUp(peer)
        },
      },
      joinRetry: o.joinRetry,
      log,
    })
    const session = stack.session
    const scheduler = stack.startScheduling(o.scheduler, () => o.env.now())
    const stops: Array<() => void> = [followAccountSpaces(stack, account)]
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
    stack.adoptLinkedPeers()
    const peers = new AddedPeers(
      node,
      book,
      (p) => session.identityOf(p),
      realTimer,
      () => o.env.now(),
      o.redial,
      log.child('added-peers'),
    )
    stops.push(() => peers.stop())
    // Protocols beside head sync trust only what head sync proved, and share its guard.
    const trust: PeerTrust = {
      identityOf: (p) => session.identityOf(p),
      custodian: (p) => {
        const id = session.identityOf(p)
        return id !== undefined && custodians.has(id)
      },
      refused: (p) => guard.refused(p),
      fault: (p, w) => {
        if (guard.fault(p, w === 'max' ? guard.maxFaults : 1)) hangUp(p)
      },
    }
    return new P2PService(node, transport, stack, scheduler, stops, discoveredAt, o.mdns, guard, peers, trust, custodians)
  }

  get session(): SyncSession {
    return this.stack.session
  }

  get driver(): SyncDriver {
    return this.stack.driver
  }

  /** Joins and offers over the wire (the account engine's SharingNetwork). */
  get sharing(): WireSharing {
    return this.stack.sharing
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
    const spacesOf = (peer: string) =>
      [...this.scheduler.stats]
        .filter(([, m]) => m.get(peer)?.lastSyncAt)
        .map(([s]) => s)
        .sort()
    return {
      peerId: this.transport.peerId,
      listen: this.node.getMultiaddrs().map((m) => m.toString()),
      peers: this.scheduler.connectedPeers().map((peerId) => ({
        peerId,
        identity: this.session.identityOf(peerId) ?? null,
        addresses: this.node
          .getConnections()
          .filter((c) => c.remotePeer.toString() === peerId)
          .map((c) => c.remoteAddr.toString()),
        spaces: spacesOf(peerId),
      })),
      sharing,
    }
  }

  async stop(): Promise<void> {
    for (const s of this.stopListening) s()
    await this.stack.close()
    await this.transport.close()
    await this.node.stop()
  }
}
