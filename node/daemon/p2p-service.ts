import type { Env } from '../../sync/core/env.ts'
import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import type { WalletKeys } from '../../sync/crypto/wallet.ts'
import { SyncSession } from '../../sync/protocol/session.ts'
import { SyncDriver, type RoundResult, type Timer } from '../../sync/protocol/sync-driver.ts'
import type { Transport } from '../../sync/protocol/transport.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import { createSvcNode, type SvcLibp2p } from '../p2p/libp2p-node.ts'
import { Libp2pTransport } from '../p2p/libp2p-transport.ts'
import { SyncScheduler, type SchedulerOptions } from './sync-scheduler.ts'

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
}

export const realTimer: Timer = {
  after(ms, fn) {
    const t = setTimeout(fn, ms)
    t.unref?.()
    return () => clearTimeout(t)
  },
}

/** A Transport whose peer events also reach the scheduler (a transport has one handler each). */
function tap(t: Transport, up: (p: string) => void, down: (p: string) => void): Transport {
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
    onMessage: (h) => t.onMessage(h),
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
    /** When each LAN peer was first discovered (ms), for discovery-to-sync timing. */
    readonly discoveredAt: Map<string, number>,
    private readonly mdnsOn: boolean,
  ) {}

  static async start(o: P2POptions): Promise<P2PService> {
    const node = await createSvcNode({ deviceKey: o.keys.device, mdns: o.mdns, listen: o.listen })
    const discoveredAt = new Map<string, number>()
    node.addEventListener('peer:discovery', (evt) => {
      const id = evt.detail.id.toString()
      if (!discoveredAt.has(id)) discoveredAt.set(id, o.env.now())
    })
    const transport = await Libp2pTransport.start(node)
    const account = o.account
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
    })
    let scheduler!: SyncScheduler
    const tapped = tap(transport, (p) => scheduler.peerUp(p), (p) => scheduler.peerDown(p))
    const driver = new SyncDriver({ transport: tapped, session, timer: realTimer, timeoutMs: o.roundTimeoutMs })
    scheduler = new SyncScheduler(driver, () => account.openSpaces().map((s) => s.spaceId), realTimer, () => o.env.now(), o.scheduler)
    const stops: Array<() => void> = []
    const watch = (spaceEngine: ReturnType<AccountEngine['openSpaces']>[number]) =>
      stops.push(spaceEngine.replica.addCommitListener((info) => scheduler.changed(spaceEngine.spaceId, info.local)))
    for (const s of account.openSpaces()) watch(s)
    stops.push(
      account.onSpacesOpened((ids) => {
        for (const id of ids) {
          const s = account.held(id)
          if (s) watch(s)
        }
        scheduler.spacesAdded(ids)
      }),
    )
    // Peers already connected before the transport started.
    for (const p of transport.peers()) scheduler.peerUp(p)
    return new P2PService(node, transport, session, driver, scheduler, stops, discoveredAt, o.mdns)
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
