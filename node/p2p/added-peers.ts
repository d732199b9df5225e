import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import { SvcError } from '../../sync/core/errors.ts'
import { errField, silentLogger, type Logger } from '../../sync/core/log.ts'
import type { Timer } from '../../sync/protocol/sync-driver.ts'
import type { SvcLibp2p } from './libp2p-node.ts'
import { parsePeerAddress } from './peer-address.ts'
import type { AddedPeer, PeerBook } from './peer-book.ts'
import { Redialer } from '../../sync/p2p/redialer.ts'

const date = (ms: number) => ({ $date: new Date(ms).toISOString() })

/** A peer added by address, as `GET /v1/peers` shows it. */
export interface PeerRecord {
  peerId: string
  multiaddr: string
  source: 'api' | 'config'
  addedAt: { $date: string }
  connected: boolean
  /** The account it proved on the link, once it has. */
  identity: string | null
  /** Dials that failed since it was last connected, the last failure, and the next dial. */
  failures: number
  lastError: string | null
  nextDialAt: { $date: string } | null
}

/**
 * Peers beyond the LAN (issue 13): the PeerBook's peers, kept connected by a Redialer over the
 * libp2p node. Head sync needs nothing more: once connected, a peer is like one found by mDNS.
 */
export class AddedPeers {
  private readonly redialer: Redialer
  private readonly stops: Array<() => void> = []

  constructor(
    private readonly node: SvcLibp2p,
    private readonly book: PeerBook,
    private readonly identityOf: (peerId: string) => string | undefined,
    timer: Pick<Timer, 'after'>,
    now: () => number,
    redial: { baseMs?: number; maxMs?: number } = {},
    private readonly log: Logger = silentLogger,
  ) {
    this.redialer = new Redialer({
      dial: (addr) => this.dial(addr),
      isConnected: (peerId) => this.isConnected(peerId),
      timer,
      now,
      ...redial,
    })
    const onConnect = (evt: CustomEvent<{ toString(): string }>) => this.redialer.connected(evt.detail.toString())
    const onDisconnect = (evt: CustomEvent<{ toString(): string }>) => this.redialer.disconnected(evt.detail.toString())
    // A listed peer's own announcement of where it listens (identify, on every connection,
    // whoever dialled): its address moved (a restart on another port) when ours is not there.
    const onIdentify = (evt: CustomEvent<{ peerId: { toString(): string }; listenAddrs: Multiaddr[] }>) =>
      this.announced(
        evt.detail.peerId.toString(),
        evt.detail.listenAddrs.map((m) => m.toString()),
      )
    node.addEventListener('peer:connect', onConnect)
    node.addEventListener('peer:disconnect', onDisconnect)
    node.addEventListener('peer:identify', onIdentify)
    this.stops.push(
      () => node.removeEventListener('peer:connect', onConnect),
      () => node.removeEventListener('peer:disconnect', onDisconnect),
      () => node.removeEventListener('peer:identify', onIdentify),
    )
    for (const p of book.list()) this.redialer.watch(p.peerId, p.multiaddr)
  }

  /**
   * Dials a listed peer at its address; when that fails, looks the peer up by its id before
   * giving up (issue 39, item 4): the addresses libp2p learned for it since (mDNS, identify of
   * an earlier connection, a hub), then its peer routing. An address that answers becomes the
   * listed one.
   */
  private async dial(addr: string): Promise<unknown> {
    try {
      return await this.node.dial(multiaddr(addr))
    } catch (err) {
      const peerId = parsePeerAddress(addr).peerId
      for (const other of await this.lookUp(peerId, addr)) {
        try {
          const conn = await this.node.dial(multiaddr(other))
          this.readdress(peerId, other)
          return conn
        } catch (e) {
          this.log.debug('another known address of the peer did not answer either', { peerId, addr: other, err: errField(e) })
        }
      }
      throw err
    }
  }

  /** Other dialable addresses (host/tcp/port/p2p/id) known for a peer id. */
  private async lookUp(peerId: string, failed: string): Promise<string[]> {
    const found = new Set<string>()
    const add = (addrs: readonly Multiaddr[]) => {
      for (const m of addrs) {
        const text = m.toString().replace(/\/p2p\/[^/]+$/, '')
        try {
          const a = parsePeerAddress(`${text}/p2p/${peerId}`)
          if (a.multiaddr !== failed) found.add(a.multiaddr)
        } catch (e) {
          // Not a host/tcp/port address (WebSockets, circuit): not one to keep.
          this.log.debug('an address of the peer is not one to dial by address', { peerId, addr: text, err: errField(e) })
        }
      }
    }
    const id = peerIdFromString(peerId)
    try {
      add((await this.node.peerStore.get(id)).addresses.map((a) => a.multiaddr))
    } catch (e) {
      this.log.debug('the peer store knows nothing of the peer', { peerId, err: errField(e) })
    }
    if (found.size === 0) {
      try {
        add((await this.node.peerRouting.findPeer(id, { signal: AbortSignal.timeout(5_000) })).multiaddrs)
      } catch (e) {
        // No router knows it (a daemon runs none but mDNS unless it has hubs).
        this.log.debug('no router found the peer by its id', { peerId, err: errField(e) })
      }
    }
    return [...found]
  }

  /** A listed peer announced where it listens: re-address it when its listed address is not among them. */
  private announced(peerId: string, listenAddrs: string[]): void {
    const listed = this.book.get(peerId)
    if (!listed) return
    const bare = listed.multiaddr.replace(/\/p2p\/[^/]+$/, '')
    if (listenAddrs.some((a) => a.replace(/\/p2p\/[^/]+$/, '') === bare)) return
    const host = bare.split('/').slice(0, 3).join('/')
    const candidates = listenAddrs
      .map((a) => {
        try {
          return parsePeerAddress(`${a.replace(/\/p2p\/[^/]+$/, '')}/p2p/${peerId}`).multiaddr
        } catch {
          return undefined
        }
      })
      .filter((a): a is string => a !== undefined)
    // The same host on another port first (a restart); else the first it announced.
    const next = candidates.find((a) => a.startsWith(`${host}/`)) ?? candidates[0]
    if (next) this.readdress(peerId, next)
  }

  private readdress(peerId: string, addr: string): void {
    if (this.book.get(peerId)?.multiaddr === addr) return
    this.book.readdress(peerId, addr)
    this.redialer.readdress(peerId, addr)
  }

  private isConnected(peerId: string): boolean {
    return this.node.getConnections().some((c) => c.remotePeer.toString() === peerId)
  }

  list(): PeerRecord[] {
    return this.book.list().map((p) => this.record(p))
  }

  /** Adds (or re-addresses) a peer and dials it; 400 `request.invalid_field` on a bad or own address. */
  add(text: unknown): { peer: PeerRecord; created: boolean } {
    const a = parsePeerAddress(text)
    if (a.peerId === this.node.peerId.toString()) throw new SvcError('request.invalid_field', 'that is this device', { field: 'multiaddr' })
    const { peer, created } = this.book.add(a)
    this.redialer.watch(peer.peerId, peer.multiaddr)
    return { peer: this.record(peer), created }
  }

  /** Forgets a peer and stops redialling it (an open connection stays until it drops); 404 `peer.not_found`. */
  remove(peerId: string): void {
    if (!this.book.remove(peerId)) throw new SvcError('peer.not_found', 'no peer with this id was added', { peerId })
    this.redialer.unwatch(peerId)
  }

  stop(): void {
    for (const s of this.stops.splice(0)) s()
    this.redialer.close()
  }

  private record(p: AddedPeer): PeerRecord {
    const st = this.redialer.state(p.peerId)
    return {
      peerId: p.peerId,
      multiaddr: p.multiaddr,
      source: p.source,
      addedAt: date(p.addedAt),
      connected: this.isConnected(p.peerId),
      identity: this.identityOf(p.peerId) ?? null,
      failures: st?.failures ?? 0,
      lastError: st?.lastError ?? null,
      nextDialAt: st?.nextDialAt != null ? date(st.nextDialAt) : null,
    }
  }
}
