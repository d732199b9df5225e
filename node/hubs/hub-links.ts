import { SvcError } from '../../sync/core/errors.ts'
import type { Logger } from '../../sync/core/log.ts'
import type { HubCode, HubUsage, SpaceCode } from '../../sync/protocol/hub-wire.ts'
import { HubLinksCore, type HeldSpaceIds } from '../../sync/p2p/hub-links.ts'
import type { SyncSession } from '../../sync/protocol/session.ts'
import type { Timer } from '../../sync/protocol/sync-driver.ts'
import type { SyncScheduler } from '../../sync/protocol/sync-scheduler.ts'
import type { SvcLibp2p } from '../p2p/libp2p-node.ts'
import { parseHubSpec, type HubBook, type HubEntry } from './hub-book.ts'

const date = (ms: number) => ({ $date: new Date(ms).toISOString() })

/** Where one of our spaces stands with one hub. */
export interface HubSpaceState {
  spaceId: string
  /** The hub's last word on it; `unregistered` until it answered. */
  state: SpaceCode | 'unregistered'
  /** The last head-sync round with the hub about it that completed. */
  lastSyncAt: { $date: string } | null
}

/** A hub as `GET /v1/hubs` shows it. */
export interface HubRecord {
  peerId: string
  multiaddr: string
  source: 'api' | 'config'
  addedAt: { $date: string }
  connected: boolean
  /** The hub's identity, once it proved it on head sync. */
  identity: string | null
  /** Whether the hub admits this account: null until it answered. */
  admission: HubCode | 'unknown' | null
  usage: HubUsage | null
  failures: number
  lastError: string | null
  nextDialAt: { $date: string } | null
  spaces: HubSpaceState[]
}

/**
 * This device's hubs (docs/hub.md "Using a hub"): the hub book (added over the API or named by
 * the configuration) over the links a page keeps the same way (sync/p2p/hub-links.ts): each hub
 * connected and redialled, trusted as the custodian of our spaces once it proved its identity on
 * head sync, every space we hold registered with it (at once, on open and every minute) and
 * synced with it.
 */
export class HubLinks {
  private readonly core: HubLinksCore

  constructor(
    private readonly o: {
      node: SvcLibp2p
      session: SyncSession
      scheduler: () => SyncScheduler | undefined
      /** Identities trusted as custodians by head sync and the block exchange (P2PService.custodians). */
      custodians: Set<string>
      spaces: HeldSpaceIds
      book: HubBook
      timer: Pick<Timer, 'after'>
      now: () => number
      log: Logger
      redial?: { baseMs?: number; maxMs?: number }
    },
  ) {
    this.core = new HubLinksCore({ ...o, directory: o.book })
  }

  /** Adds (or re-addresses) a hub and dials it; 400 `request.invalid_field` on a bad address or token. */
  add(text: unknown, token?: unknown): { hub: HubRecord; created: boolean } {
    const spec = parseHubSpec(text, token)
    if (spec.address.peerId === this.o.node.peerId.toString()) throw new SvcError('request.invalid_field', 'that is this device', { field: 'multiaddr' })
    const { hub, created } = this.o.book.add(spec.address, spec.token)
    // Already connected: registers at once with the new token.
    this.core.watch(hub)
    return { hub: this.record(hub), created }
  }

  /** Forgets a hub: no more redials, and it is no longer a custodian of our spaces. 404 `peer.not_found`. */
  remove(peerId: string): void {
    if (!this.o.book.remove(peerId)) throw new SvcError('peer.not_found', 'no hub with this id was added', { peerId })
    this.core.unwatch(peerId)
  }

  list(): HubRecord[] {
    return this.o.book.list().map((h) => this.record(h))
  }

  /** Every hub's state for one space (sync status). */
  spaceStates(spaceId: string): Array<{ peerId: string; connected: boolean; state: SpaceCode | 'unregistered'; lastSyncAt: { $date: string } | null }> {
    return this.o.book.list().map((h) => ({ peerId: h.peerId, connected: this.core.isConnected(h.peerId), ...this.spaceState(h.peerId, spaceId) }))
  }

  /** Whether a transport peer is one of our hubs. */
  isHub(peer: string): boolean {
    return this.o.book.get(peer) !== undefined
  }

  stop(): void {
    this.core.stop()
  }

  private spaceState(peer: string, spaceId: string): { state: SpaceCode | 'unregistered'; lastSyncAt: { $date: string } | null } {
    const at = this.o.scheduler()?.stats.get(spaceId)?.peek(peer)?.lastSyncAt ?? null
    return { state: this.core.spaceState(peer, spaceId), lastSyncAt: at === null ? null : date(at) }
  }

  private record(h: HubEntry): HubRecord {
    const link = this.core.state(h.peerId)
    const st = link.dial
    return {
      peerId: h.peerId,
      multiaddr: h.multiaddr,
      source: h.source,
      addedAt: date(h.addedAt),
      connected: link.connected,
      identity: link.identity,
      admission: link.admission,
      usage: link.usage,
      failures: st?.failures ?? 0,
      lastError: st?.lastError ?? null,
      nextDialAt: st?.nextDialAt != null ? date(st.nextDialAt) : null,
      spaces: this.o.spaces.spaceIds().map((spaceId) => ({ spaceId, ...this.spaceState(h.peerId, spaceId) })),
    }
  }
}
