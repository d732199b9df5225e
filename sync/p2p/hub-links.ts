import { multiaddr } from '@multiformats/multiaddr'
import { errField, type Logger } from '../core/log.ts'
import { utf8 } from '../core/encoding.ts'
import { decodeHubMessage, encodeHubMessage, HUB_WIRE, type HubCode, type HubMessage, type HubUsage, type SpaceCode } from '../protocol/hub-wire.ts'
import type { SyncSession } from '../protocol/session.ts'
import type { Timer } from '../protocol/sync-driver.ts'
import type { RoundEvent, SyncScheduler } from '../protocol/sync-scheduler.ts'
import type { SvcLibp2p } from './node-options.ts'
import { Redialer, type DialState } from './redialer.ts'
import { readOneFrame, writeFrame } from './one-frame.ts'

/** How often a device asks its hubs again where its spaces stand (quota notices, new members). */
export const HUB_REFRESH_MS = 60_000
const REPLY_TIMEOUT_MS = 10_000

/** A hub to keep: its peer id, the address to dial, and an admission token until the hub took it. */
export interface HubAddress {
  peerId: string
  multiaddr: string
  token?: string
}

/** Where this device keeps its hubs: the daemon's hub book (a file), a page's memory. */
export interface HubDirectory {
  list(): HubAddress[]
  get(peerId: string): HubAddress | undefined
  /** The hub took the token: it is not needed again. */
  tokenTaken(peerId: string): void
}

/** What the links need of the account: the spaces it holds, and word of new ones. */
export interface HeldSpaceIds {
  spaceIds(): string[]
  onSpacesOpened(fn: (spaceIds: string[]) => void): () => void
}

/** What this device knows of one hub. */
export interface HubLinkState {
  connected: boolean
  /** The hub's identity, once it proved it on head sync. */
  identity: string | null
  /** Whether the hub admits this account: null until it answered. */
  admission: HubCode | 'unknown' | null
  usage: HubUsage | null
  dial: DialState | undefined
  /** The hub's last word on each space registered with it. */
  spaces: ReadonlyMap<string, SpaceCode>
}

interface Link {
  identity?: string
  admission?: HubCode | 'unknown'
  usage?: HubUsage
  spaces: Map<string, SpaceCode>
  registering?: Promise<void>
}

/**
 * A device's links to its hubs (docs/hub.md "Using a hub"), the part the daemon
 * (node/hubs/hub-links.ts) and a page (sync/browser/sync.ts) share: keeps each hub connected
 * (redialled with backoff like an added peer), and once the hub has proved its identity on head
 * sync, trusts it as the custodian of our spaces (it syncs them as a reader would, though it
 * reads nothing: `custodians` is what the session host's `custodian` hook reads), registers
 * every space we hold with it over the control protocol (`/svc/hub/1.0.0`,
 * sync/protocol/hub-wire.ts), and rounds with it about those it keeps. Registrations are
 * refreshed every HUB_REFRESH_MS and whenever we open a space, so quota notices and states stay
 * current, and a space the hub holds as `pending` is asked about again after each round with it
 * that ended well (it may have brought the ACL the hub waited for).
 */
export class HubLinksCore {
  private readonly links = new Map<string, Link>()
  private readonly redialer: Redialer
  private readonly stops: Array<() => void> = []
  /** Per hub, pending spaces to ask about again (roundEnded). */
  private readonly recheck = new Map<string, Set<string>>()
  private nextReq = 1

  constructor(
    private readonly o: {
      node: SvcLibp2p
      session: SyncSession
      scheduler: () => SyncScheduler | undefined
      /** Identities trusted as custodians by head sync (and, on a daemon, the block exchange). */
      custodians: Set<string>
      spaces: HeldSpaceIds
      directory: HubDirectory
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
    const rounds = o.scheduler()?.onRound((e) => this.roundEnded(e))
    if (rounds) this.stops.push(rounds)
    for (const h of o.directory.list()) this.watch(h)
    this.scheduleRefresh()
  }

  /**
   * Starts keeping a hub of the directory connected (a new address replaces the old one). When it
   * is connected and proved its identity already, registers every space at once (a new token).
   */
  watch(h: HubAddress): void {
    if (!this.links.has(h.peerId)) this.links.set(h.peerId, { spaces: new Map() })
    this.redialer.watch(h.peerId, h.multiaddr)
    if (this.isConnected(h.peerId) && this.o.session.identityOf(h.peerId)) void this.register(h.peerId, this.o.spaces.spaceIds())
  }

  /** Forgets a hub (already gone from the directory): no more redials, and it is no longer a custodian of our spaces. */
  unwatch(peerId: string): void {
    this.redialer.unwatch(peerId)
    const link = this.links.get(peerId)
    if (link?.identity) this.o.custodians.delete(link.identity)
    this.links.delete(peerId)
  }

  isConnected(peerId: string): boolean {
    return this.o.node.getConnections().some((c) => c.remotePeer.toString() === peerId)
  }

  state(peerId: string): HubLinkState {
    const link = this.links.get(peerId)
    return {
      connected: this.isConnected(peerId),
      identity: link?.identity ?? null,
      admission: link?.admission ?? null,
      usage: link?.usage ?? null,
      dial: this.redialer.state(peerId),
      spaces: link?.spaces ?? new Map(),
    }
  }

  /** The hub's last word on one space; `unregistered` until it answered. */
  spaceState(peerId: string, spaceId: string): SpaceCode | 'unregistered' {
    return this.links.get(peerId)?.spaces.get(spaceId) ?? 'unregistered'
  }

  /** Registers every space we hold with every connected hub that proved its identity, now; resolves when all answered. */
  async refresh(): Promise<void> {
    const ids = this.o.spaces.spaceIds()
    await Promise.all([...this.links.keys()].filter((p) => this.isConnected(p) && this.o.session.identityOf(p)).map((p) => this.register(p, ids)))
  }

  stop(): void {
    for (const s of this.stops.splice(0)) s()
    this.redialer.close()
    for (const l of this.links.values()) if (l.identity) this.o.custodians.delete(l.identity)
  }

  private authenticated(peer: string, identity: string) {
    const link = this.links.get(peer)
    if (!link || !this.o.directory.get(peer)) return
    link.identity = identity
    this.o.custodians.add(identity)
    void this.register(peer, this.o.spaces.spaceIds())
  }

  private scheduleRefresh() {
    this.stops.push(
      this.o.timer.after(HUB_REFRESH_MS, () => {
        void this.refresh()
        this.scheduleRefresh()
      }),
    )
  }

  /** Registers spaces with a hub, then rounds with it about those it took. */
  private register(peer: string, spaceIds: string[]): Promise<void> {
    return this.serially(peer, async (link) => {
      const taken = await this.ask(peer, link, spaceIds)
      // The hub takes a space from the moment it is registered: sync those it took now.
      if (taken?.length) await this.o.scheduler()?.syncWith(peer, taken)
    })
  }

  /**
   * A round with a hub about a space it holds as `pending` (waiting for the space's ACL) ended
   * well: it may have brought the ACL, so ask again now rather than at the next refresh. Asks
   * for the spaces of rounds ending meanwhile together.
   */
  private roundEnded(e: RoundEvent) {
    if (e.phase !== 'end' || !e.result?.ok || this.links.get(e.peer)?.spaces.get(e.spaceId) !== 'pending') return
    let ids = this.recheck.get(e.peer)
    if (ids) return void ids.add(e.spaceId)
    this.recheck.set(e.peer, (ids = new Set([e.spaceId])))
    void this.serially(e.peer, async (link) => {
      this.recheck.delete(e.peer)
      await this.ask(e.peer, link, [...ids])
    })
  }

  /** Control requests to one hub run one after another. */
  private serially(peer: string, fn: (link: Link) => Promise<void>): Promise<void> {
    const link = this.links.get(peer)
    if (!link) return Promise.resolve()
    const p = (link.registering ?? Promise.resolve())
      .then(() => fn(link))
      .catch((err: unknown) => this.o.log.info('registering spaces with a hub failed', { peer, err: errField(err) }))
    link.registering = p
    return p
  }

  /**
   * Register requests in frames of at most maxSpacesPerRequest; resolves with the spaces the hub
   * took (`kept` or `pending`), in our order (the account's own space, which lists the others,
   * first), or undefined when the hub does not keep this account's spaces.
   */
  private async ask(peer: string, link: Link, spaceIds: string[]): Promise<string[] | undefined> {
    const taken: string[] = []
    for (let i = 0; i < Math.max(1, spaceIds.length); i += HUB_WIRE.maxSpacesPerRequest) {
      const chunk = spaceIds.slice(i, i + HUB_WIRE.maxSpacesPerRequest)
      const token = this.o.directory.get(peer)?.token
      const reply = await this.request(peer, { kind: 'register', reqId: this.nextReq++, token: utf8(token ?? ''), spaceIds: chunk })
      if (reply.kind !== 'status') return undefined
      link.admission = reply.code
      link.usage = reply.usage
      if (reply.code !== 'ok') {
        this.o.log.warn('a hub does not keep our spaces', { peer, code: reply.code })
        return undefined
      }
      if (token) this.o.directory.tokenTaken(peer)
      const got = new Map(reply.spaces)
      for (const [id, code] of got) link.spaces.set(id, code)
      for (const id of chunk) {
        const code = got.get(id)
        if (code === 'kept' || code === 'pending') taken.push(id)
      }
    }
    return taken
  }

  /** One control request and its answer, on a stream of its own over the link up now. */
  private async request(peer: string, m: HubMessage): Promise<HubMessage> {
    const conn = this.o.node.getConnections().find((c) => c.remotePeer.toString() === peer)
    if (!conn) throw new Error('the hub is not connected')
    const stream = await this.o.node.dialProtocol(conn.remotePeer, HUB_WIRE.protocol, { signal: AbortSignal.timeout(REPLY_TIMEOUT_MS) })
    try {
      writeFrame(stream, encodeHubMessage(m))
      const reply = decodeHubMessage(await readOneFrame(stream, HUB_WIRE.maxFrameBytes, REPLY_TIMEOUT_MS))
      // The reply is in: a close that fails (the hub hung up first) changes nothing.
      await stream.close().catch((err: unknown) => this.o.log.debug('closing a hub control stream after its reply failed', { err: errField(err) }))
      return reply
    } catch (err) {
      stream.abort(err as Error)
      throw err
    }
  }
}
