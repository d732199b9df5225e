import type { Connection, PeerId, Stream } from '@libp2p/interface'
import { nextTurn } from '../core/turns.ts'
import { errField, silentLogger, type Logger } from '../core/log.ts'
import * as lp from 'it-length-prefixed'
import { Uint8ArrayList } from 'uint8arraylist'
import { TransportError, type Transport } from '../protocol/transport.ts'
import type { SvcLibp2p } from './node-options.ts'
import { P2P } from './constants.ts'
import { FrameDecoder, FrameError, type FrameFault } from './frames.ts'

type Handler<A extends unknown[]> = (...args: A) => void | Promise<void>

interface Link {
  /** Our stream for sending to this peer (one per peer: frames keep their order). */
  out: Stream
  up: boolean
}

export interface Libp2pTransportOptions {
  protocol?: string
  maxFrameBytes?: number
  maxQueuedSendBytes?: number
  /** Bytes waiting in a peer's send buffer past which `drain` asks the sender to wait. */
  sendWatermarkBytes?: number
  maxQueuedFrames?: number
  /**
   * Bytes libp2p may hold for a paused inbound stream before resetting it (default one largest
   * frame). A protocol whose frames are smaller than the stream window passes the window plus a
   * frame, or a peer's ordinary burst would reset its stream whenever reading pauses.
   */
  maxReadBufferBytes?: number
  /** Where the transport logs (default: nowhere). */
  log?: Logger
}

/**
 * Head sync's Transport over libp2p: each side opens one outbound stream of the versioned
 * protocol to every peer it connects to and sends length-prefixed frames on it; frames from a
 * peer arrive on that peer's outbound stream to us. Memory per peer is bounded both ways:
 * libp2p resets a stream whose unsent bytes pass `maxQueuedSendBytes`, and reading from a peer
 * pauses while `maxQueuedFrames` of its frames wait for the handler; a frame announcing more
 * than `maxFrameBytes` resets the stream before any of it is buffered.
 */
export class Libp2pTransport implements Transport {
  readonly peerId: string
  readonly maxFrameBytes: number
  readonly ordered = true
  private readonly links = new Map<string, Link>()
  private readonly opening = new Map<string, Promise<void>>()
  /** Frames sent while our stream to the peer is still opening, flushed in order once it is. */
  private readonly early = new Map<string, { frames: Uint8Array[]; bytes: number }>()
  private readonly inbound = new Set<Stream>()
  private readonly inboundPeer = new WeakMap<Stream, string>()
  private readonly protocol: string
  private readonly maxQueuedSendBytes: number
  private readonly sendWatermarkBytes: number
  private readonly maxQueuedFrames: number
  private readonly maxReadBufferBytes: number
  private messageHandler: Handler<[string, Uint8Array]> = () => undefined
  private upcomingHandler: ((from: string, bytes: Uint8Array) => void) | undefined
  private upHandler: Handler<[string]> = () => undefined
  private downHandler: Handler<[string]> = () => undefined
  private faultHandler: (peer: string, reason: FrameFault) => void = () => undefined
  private refusePeer: (peer: string) => boolean = () => false
  private closed = false
  /** Frames refused or streams reset, by reason, since start. */
  readonly drops: Record<string, number> = {}
  private readonly log: Logger

  private constructor(
    private readonly node: SvcLibp2p,
    opts: Libp2pTransportOptions,
  ) {
    this.peerId = node.peerId.toString()
    this.protocol = opts.protocol ?? P2P.headSyncProtocol
    this.maxFrameBytes = opts.maxFrameBytes ?? P2P.maxFrameBytes
    this.maxQueuedSendBytes = opts.maxQueuedSendBytes ?? P2P.maxQueuedSendBytes
    this.sendWatermarkBytes = opts.sendWatermarkBytes ?? P2P.sendWatermarkBytes
    this.maxQueuedFrames = opts.maxQueuedFrames ?? P2P.maxQueuedFrames
    this.maxReadBufferBytes = opts.maxReadBufferBytes ?? this.maxFrameBytes + 16
    this.log = opts.log ?? silentLogger
  }

  static async start(node: SvcLibp2p, opts: Libp2pTransportOptions = {}): Promise<Libp2pTransport> {
    const t = new Libp2pTransport(node, opts)
    await node.handle(t.protocol, (stream, connection) => t.onInbound(stream, connection), {
      maxInboundStreams: P2P.maxStreamsPerConnection,
      maxOutboundStreams: P2P.maxStreamsPerConnection,
    })
    node.addEventListener('peer:connect', (evt) => void t.connectTo(evt.detail))
    node.addEventListener('peer:disconnect', (evt) => t.linkDown(evt.detail.toString()))
    for (const c of node.getConnections()) void t.connectTo(c.remotePeer)
    return t
  }

  send(peer: string, bytes: Uint8Array): void {
    this.sendFrame(peer, bytes)
  }

  /**
   * One frame whose bytes are the concatenation of `parts`, written as they are: a large
   * payload (a file block) goes to the stream without first being copied into one buffer.
   */
  sendParts(peer: string, parts: readonly Uint8Array[]): void {
    this.sendFrame(peer, new Uint8ArrayList(...parts))
  }

  private sendFrame(peer: string, frame: Uint8Array | Uint8ArrayList): void {
    if (this.closed) throw new TransportError('closed', 'transport is closed')
    const size = frame.byteLength
    if (size > this.maxFrameBytes) throw new TransportError('frame_too_large', `frame of ${size} bytes exceeds ${this.maxFrameBytes}`)
    const link = this.links.get(peer)
    if (!link?.up && this.opening.has(peer) && this.inboundOpenFrom(peer)) {
      // The peer reached us first (its stream is in, ours is still opening) and we answer at
      // once, e.g. its auth challenge: hold the frame for our stream instead of losing it.
      const q = this.early.get(peer) ?? { frames: [], bytes: 0 }
      if (q.bytes + size > this.maxQueuedSendBytes) throw new TransportError('peer_unavailable', 'peer is not connected yet and its send queue is full')
      q.frames.push(lp.encode.single(frame).subarray())
      q.bytes += size
      this.early.set(peer, q)
      return
    }
    if (!link?.up || link.out.status !== 'open') throw new TransportError('peer_unavailable', 'peer is not connected')
    // send() returning false means libp2p is buffering; past maxWriteBufferLength it resets
    // the stream, which takes the link down: a stalled peer cannot grow our memory. A sender
    // that waits for `drain` stays far below that.
    link.out.send(lp.encode.single(frame))
  }

  /**
   * Backpressure: while the muxer cannot take more (the peer's window is full) and our buffer
   * to it holds `sendWatermarkBytes` or more, a promise that settles at the stream's next drain
   * event or when it closes. (Not `stream.onDrain()`: in libp2p 3 its promise is made once per
   * stream and stays resolved after the first drain, so it would never wait again.)
   */
  drain(peer: string): Promise<void> | undefined {
    const out = this.links.get(peer)?.out
    if (!out || out.status !== 'open' || !out.writableNeedsDrain || out.writeBufferLength < this.sendWatermarkBytes) return undefined
    return new Promise<void>((resolve) => {
      const done = () => {
        out.removeEventListener('drain', done)
        out.removeEventListener('close', done)
        resolve()
      }
      out.addEventListener('drain', done)
      out.addEventListener('close', done)
    })
  }

  onMessage(handler: Handler<[string, Uint8Array]>) {
    this.messageHandler = handler
  }
  onUpcoming(handler: (from: string, bytes: Uint8Array) => void) {
    this.upcomingHandler = handler
  }
  onPeerUp(handler: Handler<[string]>) {
    this.upHandler = handler
  }
  onPeerDown(handler: Handler<[string]>) {
    this.downHandler = handler
  }

  /** Told when a peer's framing is refused (its stream was reset): the daemon backs it off. */
  onPeerFault(handler: (peer: string, reason: FrameFault) => void) {
    this.faultHandler = handler
  }

  /** Streams from a peer this says no to are reset at once (a backed-off peer). */
  setPeerFilter(refuse: (peer: string) => boolean) {
    this.refusePeer = refuse
  }

  peers(): string[] {
    return [...this.links]
      .filter(([, l]) => l.up)
      .map(([p]) => p)
      .sort()
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    // A node stopping first has dropped its handlers already.
    await this.node.unhandle(this.protocol).catch((err: unknown) => this.log.debug('removing the protocol handler on close failed', { err: errField(err) }))
    for (const [, link] of this.links) link.out.abort(new Error('transport closed'))
    this.links.clear()
    // The peers' streams to us too: that is how they see this peer go down.
    for (const s of this.inbound) s.abort(new Error('transport closed'))
    this.inbound.clear()
  }

  /** Opens our outbound stream to a newly connected peer; the link is up once it is open. */
  private connectTo(peer: PeerId): Promise<void> {
    const key = peer.toString()
    if (this.closed || this.links.get(key)?.up) return Promise.resolve()
    let p = this.opening.get(key)
    if (p) return p
    p = (async () => {
      try {
        const out = await this.node.dialProtocol(peer, this.protocol, { signal: AbortSignal.timeout(10_000) })
        out.maxWriteBufferLength = this.maxQueuedSendBytes
        if (this.closed) {
          out.abort(new Error('transport closed'))
          return
        }
        out.addEventListener('close', () => this.linkDown(key, out))
        // We never read from our own outbound stream; the peer never writes to it.
        out.addEventListener('message', () => this.count('unexpected_data'))
        this.links.set(key, { out, up: true })
        for (const f of this.early.get(key)?.frames ?? []) out.send(f)
        this.early.delete(key)
        await this.upHandler(key)
      } catch {
        this.count('dial_failed')
      } finally {
        this.opening.delete(key)
        this.early.delete(key)
      }
    })()
    this.opening.set(key, p)
    return p
  }

  private linkDown(peer: string, stream?: Stream) {
    const link = this.links.get(peer)
    if (!link || (stream && link.out !== stream)) return
    this.links.delete(peer)
    if (link.out.status === 'open') link.out.abort(new Error('peer disconnected'))
    if (link.up && !this.closed) void this.downHandler(peer)
    // The connection may still be there (only the stream died): open a fresh stream.
    if (!this.closed && this.node.getConnections().some((c) => c.remotePeer.toString() === peer)) {
      const conn = this.node.getConnections().find((c) => c.remotePeer.toString() === peer)!
      void this.connectTo(conn.remotePeer)
    }
  }

  /**
   * Frames from one peer, handled one at a time in order. The decoder hands out only as many
   * frames as the queue has room for; reading pauses while the queue is full and resumes once
   * every decodable frame is queued and half the queue is free, so the undecoded bytes stay
   * under the decoder's bound (a partial largest frame and one read, which yamux caps at
   * the stream window). Between batches of frames the
   * loop yields to the event loop: a peer's frames, however cheap to refuse, never starve
   * timers, other peers or the HTTP API. Bad framing resets the stream and is reported as a
   * fault of the peer.
   */
  private onInbound(stream: Stream, connection: Connection) {
    if (this.closed) {
      stream.abort(new Error('transport closed'))
      return
    }
    const from = connection.remotePeer.toString()
    if (this.refusePeer(from)) {
      this.count('refused_peer')
      stream.abort(new Error('peer is backed off'))
      return
    }
    stream.maxReadBufferLength = this.maxReadBufferBytes
    const decoder = new FrameDecoder(this.maxFrameBytes, this.maxFrameBytes + 16 + P2P.maxStreamWindowBytes)
    this.inbound.add(stream)
    this.inboundPeer.set(stream, from)
    const queue: Uint8Array[] = []
    let failed = false
    let draining = false
    /** The frame last told of as upcoming (each is told of once, and only the next in line). */
    let told: Uint8Array | undefined
    // While a frame is being handled, the next one in line is told of, so its handler can start
    // work ahead (a sync step's signature checks, while the one before it applies).
    const tellNext = () => {
      const next = queue[0]
      if (!draining || !next || next === told || !this.upcomingHandler || failed) return
      told = next
      try {
        this.upcomingHandler(from, next)
      } catch {
        this.count('handler_error')
      }
    }
    // After a clean close the frames that arrived whole are still handled; after a reset or an
    // abort (our hang-up included) nothing more of this stream is.
    stream.addEventListener('close', () => {
      this.inbound.delete(stream)
      if (stream.status !== 'closed') drop()
    })
    const drop = () => {
      failed = true
      queue.length = 0
      decoder.clear()
    }
    const fail = (reason: FrameFault) => {
      if (failed) return
      drop()
      this.count(reason)
      stream.abort(new Error(reason))
      this.faultHandler(from, reason)
    }
    // pause() and resume() throw once the connection under the stream is gone (a peer can
    // arrange that at any moment): that stream is done, never the process.
    const setReading = (on: boolean) => {
      try {
        if (on) stream.resume()
        else stream.pause()
      } catch {
        this.count('stream_gone')
      }
    }
    // Decoded frames into the queue while it has room; a short queue afterwards means the
    // decoder holds no complete frame.
    const fill = (): boolean => {
      try {
        while (queue.length < this.maxQueuedFrames) {
          const frame = decoder.next()
          if (!frame) break
          queue.push(frame)
        }
        return true
      } catch (err) {
        fail(err instanceof FrameError ? err.reason : 'malformed_prefix')
        return false
      }
    }
    const drain = async (): Promise<void> => {
      if (draining) return
      draining = true
      try {
        let batch = 0
        let sliceStart = performance.now()
        while (queue.length && !this.closed && !failed) {
          // A peer backed off while its frames waited: the rest of them are not worth a look.
          if (this.refusePeer(from)) {
            drop()
            break
          }
          const frame = queue.shift()!
          tellNext()
          try {
            await this.messageHandler(from, frame)
          } catch {
            this.count('handler_error')
          }
          if (!fill()) break
          if (stream.readStatus === 'paused' && queue.length < this.maxQueuedFrames / 2) setReading(true)
          if (++batch >= P2P.framesPerYield || performance.now() - sliceStart >= P2P.yieldAfterMs) {
            await yieldToEventLoop()
            batch = 0
            sliceStart = performance.now()
          }
        }
      } finally {
        draining = false
      }
    }
    stream.addEventListener('message', (evt) => {
      if (failed) return
      try {
        decoder.push(evt.data)
      } catch (err) {
        fail(err instanceof FrameError ? err.reason : 'read_buffer_full')
        return
      }
      if (!fill()) return
      if (queue.length >= this.maxQueuedFrames && stream.readStatus === 'readable') setReading(false)
      tellNext()
      void drain()
    })
    // A peer whose connection came in before our dial still gets our outbound stream.
    if (!this.links.get(from)?.up) void this.connectTo(connection.remotePeer)
  }

  /** Whether the peer's own stream to us is open: it is there, and reached us first. */
  private inboundOpenFrom(peer: string): boolean {
    for (const s of this.inbound) if (this.inboundPeer.get(s) === peer && s.status === 'open') return true
    return false
  }

  private count(reason: string) {
    this.drops[reason] = (this.drops[reason] ?? 0) + 1
  }
}

/**
 * A turn of the event loop: timers, I/O and other peers run before the next batch of frames. The
 * process's shared turns (sync/core/turns.ts), so a peer's frames are one slice of an iteration
 * like an ingest's, not one more on top of it.
 */
const yieldToEventLoop = nextTurn
