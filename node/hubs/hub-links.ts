import { multiaddr } from '@multiformats/multiaddr'
import { SvcError } from '../../sync/core/errors.ts'
import { errField, type Logger } from '../../sync/core/log.ts'
import { utf8 } from '../../sync/core/encoding.ts'
import { decodeHubMessage, encodeHubMessage, HUB_WIRE, type HubCode, type HubMessage, type HubUsage, type SpaceCode } from '../../sync/protocol/hub-wire.ts'
import type { SyncSession } from '../../sync/protocol/session.ts'
import type { Timer } from '../../sync/protocol/sync-driver.ts'
import type { SyncScheduler } from '../../sync/protocol/sync-scheduler.ts'
import type { SvcLibp2p } from '../p2p/libp2p-node.ts'
import { Redialer } from '../p2p/redialer.ts'
import { readOneFrame, writeFrame } from '../push/rpc.ts'
import { parseHubSpec, type HubBook, type HubEntry } from './hub-book.ts'

/** How often a device asks its hubs again where its spaces stand (quota notices, new members). */
export const HUB_REFRESH_MS = 60_000
const REPLY_TIMEOUT_MS = 10_000
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

interface Link {
  identity?: string
  admission?: HubCode | 'unknown'
  usage?: HubUsage
  spaces: Map<string, SpaceCode>
  registering?: Promise<void>
}

/** What the links need of the account: the spaces it holds, and word of new ones. */
export interface HeldSpaceIds {
  spaceIds(): string[]
  onSpacesOpened(fn: (spaceIds: string[]) => void): () => void
}

/**
 * This device's hubs (docs/hub.md "Using a hub"): keeps each connected (redialled with backoff
 * like an added peer), and once the hub has proved its identity on head sync, trusts it as the
 * custodian of our spaces (it syncs them as a reader would, though it reads nothing), registers
 * every space we hold with it, and rounds with it about them. Registrations are refreshed every
 * HUB_REFRESH_MS and whenever we open a space, so quota notices and states stay current.
 */
export class HubLinks {
  private readonly links = new Map<string, Link>()
  private readonly redialer: Redialer
  private readonly stops: Array<() => void> = []
  private nextReq = 1

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
    this.redialer = new Redialer({
      dial: (addr) => o.node.dial(multiaddr(addr)),
      isConnected: (peerId) => this.isConnected(peerId),
      timer: o.timer,
      now: o.now,
      ...o.redial,
    })
    const onConnect = (evt: CustomEvent<{ toString(): string }>) => this.redialer.connected(evt.detail.toString())
    const onDisconnect = (evt: CustomEvent<{ toString(): string }>) => this.redialer.disconnected(evt.detail.toString())
    o.node.addEventListener('peer:connect', onConnect)
    o.node.addEventListener('peer:disconnect', onDisconnect)
    this.stops.push(
      () => o.node.removeEventListener('peer:connect', onConnect),
      () => o.node.removeEventListener('peer:disconnect', onDisconnect),
      o.session.events.on('authenticated', ({ peer, identity }) => this.authenticated(peer, identity)),
      o.spaces.onSpacesOpened((ids) => {
        for (const peer of this.links.keys()) if (this.isConnected(peer)) void this.register(peer, ids)
      }),
    )
    for (const h of o.book.list()) this.watch(h)
    this.scheduleRefresh()
  }

  /** Adds (or re-addresses) a hub and dials it; 400 `request.invalid_field` on a bad address or token. */
  add(text: unknown, token?: unknown): { hub: HubRecord; created: boolean } {
    const spec = parseHubSpec(text, token)
    if (spec.address.peerId === this.o.node.peerId.toString()) throw new SvcError('request.invalid_field', 'that is this device', { field: 'multiaddr' })
    const { hub, created } = this.o.book.add(spec.address, spec.token)
    this.watch(hub)
    // Already connected: register at once with the new token.
    if (this.isConnected(hub.peerId) && this.o.session.identityOf(hub.peerId)) void this.register(hub.peerId, this.o.spaces.spaceIds())
    return { hub: this.record(hub), created }
  }

  /** Forgets a hub: no more redials, and it is no longer a custodian of our spaces. 404 `peer.not_found`. */
  remove(peerId: string): void {
    if (!this.o.book.remove(peerId)) throw new SvcError('peer.not_found', 'no hub with this id was added', { peerId })
    this.redialer.unwatch(peerId)
    const link = this.links.get(peerId)
    if (link?.identity) this.o.custodians.delete(link.identity)
    this.links.delete(peerId)
  }

  list(): HubRecord[] {
    return this.o.book.list().map((h) => this.record(h))
  }

  /** Every hub's state for one space (sync status). */
  spaceStates(spaceId: string): Array<{ peerId: string; connected: boolean; state: SpaceCode | 'unregistered'; lastSyncAt: { $date: string } | null }> {
    return this.o.book.list().map((h) => ({ peerId: h.peerId, connected: this.isConnected(h.peerId), ...this.spaceState(h.peerId, spaceId) }))
  }

  /** Whether a transport peer is one of our hubs. */
  isHub(peer: string): boolean {
    return this.o.book.get(peer) !== undefined
  }

  stop(): void {
    for (const s of this.stops.splice(0)) s()
    this.redialer.close()
    for (const l of this.links.values()) if (l.identity) this.o.custodians.delete(l.identity)
  }

  private watch(h: HubEntry) {
    if (!this.links.has(h.peerId)) this.links.set(h.peerId, { spaces: new Map() })
    this.redialer.watch(h.peerId, h.multiaddr)
  }

  private isConnected(peerId: string): boolean {
    return this.o.node.getConnections().some((c) => c.remotePeer.toString() === peerId)
  }

  private authenticated(peer: string, identity: string) {
    const link = this.links.get(peer)
    if (!link || !this.o.book.get(peer)) return
    link.identity = identity
    this.o.custodians.add(identity)
    void this.register(peer, this.o.spaces.spaceIds())
  }

  private scheduleRefresh() {
    this.stops.push(
      this.o.timer.after(HUB_REFRESH_MS, () => {
        for (const peer of this.links.keys()) if (this.isConnected(peer) && this.o.session.identityOf(peer)) void this.register(peer, this.o.spaces.spaceIds())
        this.scheduleRefresh()
      }),
    )
  }

  /** Registers spaces with a hub (in frames of at most maxSpacesPerRequest), then rounds with it about those it keeps. */
  private register(peer: string, spaceIds: string[]): Promise<void> {
    const link = this.links.get(peer)
    if (!link) return Promise.resolve()
    const run = async () => {
      const kept: string[] = []
      for (let i = 0; i < Math.max(1, spaceIds.length); i += HUB_WIRE.maxSpacesPerRequest) {
        const chunk = spaceIds.slice(i, i + HUB_WIRE.maxSpacesPerRequest)
        const token = this.o.book.get(peer)?.token
        const reply = await this.request(peer, { kind: 'register', reqId: this.nextReq++, token: utf8(token ?? ''), spaceIds: chunk })
        if (reply.kind !== 'status') return
        link.admission = reply.code
        link.usage = reply.usage
        if (reply.code !== 'ok') {
          this.o.log.warn('a hub does not keep our spaces', { peer, code: reply.code })
          return
        }
        if (token) this.o.book.tokenTaken(peer)
        for (const [id, code] of reply.spaces) {
          link.spaces.set(id, code)
          if (code === 'kept' || code === 'pending') kept.push(id)
        }
      }
      // The hub takes a space from the moment it is registered: sync those it keeps now.
      const chunkKept = kept.filter((id) => spaceIds.includes(id))
      if (chunkKept.length) await this.o.scheduler()?.syncWith(peer, chunkKept)
    }
    const p = (link.registering ?? Promise.resolve()).then(run).catch((err: unknown) => this.o.log.info('registering spaces with a hub failed', { peer, err: errField(err) }))
    link.registering = p
    return p
  }

  private async request(peer: string, m: HubMessage): Promise<HubMessage> {
    const stream = await this.o.node.dialProtocol(this.o.node.getConnections().find((c) => c.remotePeer.toString() === peer)!.remotePeer, HUB_WIRE.protocol, {
      signal: AbortSignal.timeout(REPLY_TIMEOUT_MS),
    })
    try {
      writeFrame(stream, encodeHubMessage(m))
      const reply = decodeHubMessage(await readOneFrame(stream, HUB_WIRE.maxFrameBytes, REPLY_TIMEOUT_MS))
      await stream.close().catch(() => undefined)
      return reply
    } catch (err) {
      stream.abort(err as Error)
      throw err
    }
  }

  private spaceState(peer: string, spaceId: string): { state: SpaceCode | 'unregistered'; lastSyncAt: { $date: string } | null } {
    const at = this.o.scheduler()?.stats.get(spaceId)?.peek(peer)?.lastSyncAt ?? null
    return { state: this.links.get(peer)?.spaces.get(spaceId) ?? 'unregistered', lastSyncAt: at === null ? null : date(at) }
  }

  private record(h: HubEntry): HubRecord {
    const st = this.redialer.state(h.peerId)
    const link = this.links.get(h.peerId)
    return {
      peerId: h.peerId,
      multiaddr: h.multiaddr,
      source: h.source,
      addedAt: date(h.addedAt),
      connected: this.isConnected(h.peerId),
      identity: link?.identity ?? null,
      admission: link?.admission ?? null,
      usage: link?.usage ?? null,
      failures: st?.failures ?? 0,
      lastError: st?.lastError ?? null,
      nextDialAt: st?.nextDialAt != null ? date(st.nextDialAt) : null,
      spaces: this.o.spaces.spaceIds().map((spaceId) => ({ spaceId, ...this.spaceState(h.peerId, spaceId) })),
    }
  }
}
