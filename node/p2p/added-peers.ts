import { multiaddr } from '@multiformats/multiaddr'
import { SvcError } from '../../sync/core/errors.ts'
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
  ) {
    this.redialer = new Redialer({
      dial: (addr) => node.dial(multiaddr(addr)),
      isConnected: (peerId) => this.isConnected(peerId),
      timer,
      now,
      ...redial,
    })
    const onConnect = (evt: CustomEvent<{ toString(): string }>) => this.redialer.connected(evt.detail.toString())
    const onDisconnect = (evt: CustomEvent<{ toString(): string }>) => this.redialer.disconnected(evt.detail.toString())
    node.addEventListener('peer:connect', onConnect)
    node.addEventListener('peer:disconnect', onDisconnect)
    this.stops.push(
      () => node.removeEventListener('peer:connect', onConnect),
      () => node.removeEventListener('peer:disconnect', onDisconnect),
    )
    for (const p of book.list()) this.redialer.watch(p.peerId, p.multiaddr)
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
