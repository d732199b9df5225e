import { TransportError, type Transport } from '../sync/protocol/transport.ts'
import type { Prng } from './prng.ts'
import type { Scheduler } from './scheduler.ts'

/** The network's behaviour for one run; the runner changes it between phases. */
export interface NetFaults {
  /** Probability that a frame is lost. */
  loss: number
  /** Probability that a frame is delivered twice. */
  dup: number
  /** One-way delay, uniform in [delayMin, delayMax] ms per frame: overlapping frames reorder. */
  delayMin: number
  delayMax: number
  /** FIFO per link: a frame never overtakes an earlier one on the same link. */
  ordered: boolean
}

export interface NetStats {
  sent: number
  delivered: number
  lost: number
  cut: number
  duplicated: number
  bytes: number
}

interface Link {
  epoch: number
  up: boolean
  /** Arrival time of the last frame per direction (for FIFO links). */
  last: Map<string, number>
}

const linkKey = (a: string, b: string) => (a < b ? `${a}|${b}` : `${b}|${a}`)

/** FNV-1a over the bytes: a cheap content checksum for the trace. */
function fnv(bytes: Uint8Array): number {
  let h = 0x811c9dc5
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193)
  return h >>> 0
}

/**
 * A simulated network: every attached peer is linked to every other (full mesh); links can be
 * cut (a partition: frames are dropped silently, nobody is told) and restored; a peer that
 * closes (crashes) goes down for everyone, and a new incarnation attached under the same id
 * comes back up. Loss, duplication and delay are drawn from the run's PRNG per frame.
 */
export class SimNetwork {
  private readonly transports = new Map<string, SimTransport>()
  private readonly links = new Map<string, Link>()
  /** Cut links, counted: overlapping partitions each restore only their own cut. */
  private readonly cuts = new Map<string, number>()
  readonly stats: NetStats = { sent: 0, delivered: 0, lost: 0, cut: 0, duplicated: 0, bytes: 0 }
  /**
   * Backpressure: bytes a peer may have in flight to one other peer before `drain` asks it to
   * wait (Infinity: never). A wait ends at a delivery event, so only code that does not run
   * inside an event (a test driving transports directly) may await it.
   */
  sendWatermark = Infinity

  constructor(
    private readonly sched: Scheduler,
    private readonly prng: Prng,
    public faults: NetFaults,
    readonly maxFrameBytes: number,
    /** Delay before peers see a link come up or go down. */
    private readonly linkEventDelay = 5,
  ) {}

  /**
   * Puts a peer (a new incarnation) on the network; links to every attached peer come up (or,
   * with `only`, to those it accepts: a minted sybil links to honest peers, not to other sybils).
   */
  attach(peerId: string, only?: (other: string) => boolean): SimTransport {
    if (this.transports.has(peerId)) throw new Error(`peer ${peerId} already attached`)
    const t = new SimTransport(peerId, this)
    this.transports.set(peerId, t)
    for (const other of [...this.transports.keys()].sort()) {
      if (other === peerId || (only && !only(other))) continue
      const k = linkKey(peerId, other)
      const link = this.links.get(k) ?? { epoch: 0, up: false, last: new Map() }
      link.epoch++
      link.up = true
      link.last.clear()
      this.links.set(k, link)
      this.linkEvent(peerId, other, 'up', link.epoch)
      this.linkEvent(other, peerId, 'up', link.epoch)
    }
    return t
  }

  /** @internal Takes a peer off the network (its transport closed). */
  detach(t: SimTransport) {
    if (this.transports.get(t.peerId) !== t) return
    this.transports.delete(t.peerId)
    for (const other of [...this.transports.keys()].sort()) {
      const link = this.links.get(linkKey(t.peerId, other))
      if (!link?.up) continue
      link.up = false
      link.epoch++
      this.linkEvent(other, t.peerId, 'down', link.epoch)
    }
  }

  /** Partitions: cut and restore a link in both directions. */
  cut(a: string, b: string) {
    const k = linkKey(a, b)
    this.cuts.set(k, (this.cuts.get(k) ?? 0) + 1)
  }
  restore(a: string, b: string) {
    const k = linkKey(a, b)
    const n = (this.cuts.get(k) ?? 0) - 1
    if (n > 0) this.cuts.set(k, n)
    else this.cuts.delete(k)
  }
  restoreAll() {
    this.cuts.clear()
  }
  isCut(a: string, b: string) {
    return this.cuts.has(linkKey(a, b))
  }
  get cutCount() {
    return this.cuts.size
  }

  /** @internal Whether the link between two peers is up (regardless of cuts). */
  isUp(a: string, b: string): boolean {
    return !!this.links.get(linkKey(a, b))?.up && this.transports.has(a) && this.transports.has(b)
  }

  /** @internal */
  upPeers(peerId: string): string[] {
    return [...this.transports.keys()].filter((p) => p !== peerId && this.isUp(peerId, p)).sort()
  }

  /** @internal Carries one frame, applying the faults; the sender is told when it leaves its queue. */
  transmit(from: string, to: string, bytes: Uint8Array, sender?: SimTransport) {
    const link = this.links.get(linkKey(from, to))!
    this.stats.sent++
    this.stats.bytes += bytes.length
    if (this.cuts.has(linkKey(from, to))) {
      this.stats.cut++
      return
    }
    const f = this.faults
    if (f.loss > 0 && this.prng.chance(f.loss)) {
      this.stats.lost++
      return
    }
    const delay = f.delayMin + this.prng.int(f.delayMax - f.delayMin + 1)
    let at = this.sched.now + delay
    if (f.ordered) {
      at = Math.max(at, link.last.get(from) ?? 0)
      link.last.set(from, at)
    }
    sender?.queued(to, bytes.length)
    this.schedule(from, to, bytes, at, link.epoch, sender)
    if (f.dup > 0 && this.prng.chance(f.dup)) {
      this.stats.duplicated++
      const later = f.ordered ? at : at + this.prng.int(f.delayMax + 1)
      this.schedule(from, to, bytes.slice(), later, link.epoch)
    }
  }

  private schedule(from: string, to: string, bytes: Uint8Array, at: number, epoch: number, sender?: SimTransport) {
    this.sched.at(at, `msg ${from}>${to} ${bytes.length} ${fnv(bytes)}`, async () => {
      sender?.queued(to, -bytes.length)
      const link = this.links.get(linkKey(from, to))
      const dest = this.transports.get(to)
      if (!link?.up || link.epoch !== epoch || !dest) return
      this.stats.delivered++
      await dest.deliver(from, bytes)
    })
  }

  private linkEvent(at: string, peer: string, kind: 'up' | 'down', epoch: number) {
    this.sched.after(this.linkEventDelay, `${kind} ${at}:${peer}`, async () => {
      const link = this.links.get(linkKey(at, peer))
      const t = this.transports.get(at)
      if (!t || !link) return
      // A down always lands (the incarnation it ends is gone); an up only for the live epoch.
      if (kind === 'up' && link.epoch !== epoch) return
      await (kind === 'up' ? t.peerUp(peer) : t.peerDown(peer))
    })
  }
}

/** One peer's endpoint on the simulated network. */
export class SimTransport implements Transport {
  readonly maxFrameBytes: number
  private closed = false
  private readonly msgHandlers: Array<(from: string, bytes: Uint8Array) => void | Promise<void>> = []
  private readonly upHandlers: Array<(peer: string) => void | Promise<void>> = []
  private readonly downHandlers: Array<(peer: string) => void | Promise<void>> = []
  private readonly upSet = new Set<string>()
  /** Bytes sent to each peer and not yet delivered (or dropped), and who waits for them to fall. */
  private readonly inFlight = new Map<string, number>()
  private readonly drainWaiters = new Map<string, Array<() => void>>()

  constructor(
    readonly peerId: string,
    private readonly net: SimNetwork,
  ) {
    this.maxFrameBytes = net.maxFrameBytes
  }

  get ordered() {
    return this.net.faults.ordered
  }

  send(peer: string, bytes: Uint8Array): void {
    if (this.closed) throw new TransportError('closed', 'transport closed')
    if (bytes.length > this.maxFrameBytes) throw new TransportError('frame_too_large', `frame of ${bytes.length} bytes`)
    if (!this.upSet.has(peer) || !this.net.isUp(this.peerId, peer)) throw new TransportError('peer_unavailable', `peer ${peer} is not up`)
    this.net.transmit(this.peerId, peer, bytes, this)
  }

  drain(peer: string): Promise<void> | undefined {
    if ((this.inFlight.get(peer) ?? 0) < this.net.sendWatermark || this.closed || !this.upSet.has(peer)) return undefined
    return new Promise((resolve) => {
      const list = this.drainWaiters.get(peer) ?? []
      list.push(resolve)
      this.drainWaiters.set(peer, list)
    })
  }

  /** @internal Bytes to a peer entered (positive) or left (negative) the network. */
  queued(peer: string, delta: number) {
    const n = (this.inFlight.get(peer) ?? 0) + delta
    if (n > 0) this.inFlight.set(peer, n)
    else this.inFlight.delete(peer)
    if (delta < 0 && n < this.net.sendWatermark) this.wake(peer)
  }

  private wake(peer: string) {
    const list = this.drainWaiters.get(peer)
    this.drainWaiters.delete(peer)
    list?.forEach((w) => w())
  }

  onMessage(h: (from: string, bytes: Uint8Array) => void | Promise<void>) {
    this.msgHandlers.push(h)
  }
  onPeerUp(h: (peer: string) => void | Promise<void>) {
    this.upHandlers.push(h)
  }
  onPeerDown(h: (peer: string) => void | Promise<void>) {
    this.downHandlers.push(h)
  }

  peers(): string[] {
    return [...this.upSet].sort()
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.upSet.clear()
    for (const p of [...this.drainWaiters.keys()]) this.wake(p)
    this.net.detach(this)
  }

  get isClosed() {
    return this.closed
  }

  /** @internal */
  async deliver(from: string, bytes: Uint8Array) {
    if (this.closed || !this.upSet.has(from)) return
    for (const h of this.msgHandlers) await h(from, bytes)
  }
  /** @internal */
  async peerUp(peer: string) {
    if (this.closed || this.upSet.has(peer)) return
    this.upSet.add(peer)
    for (const h of this.upHandlers) await h(peer)
  }
  /** @internal */
  async peerDown(peer: string) {
    if (this.closed || !this.upSet.has(peer)) return
    this.upSet.delete(peer)
    this.wake(peer)
    for (const h of this.downHandlers) await h(peer)
  }
}
