/**
 * What head sync needs from a network, modeled on automerge-repo's NetworkAdapterInterface
 * (peer-candidate / peer-disconnected / message events, send, disconnect), reduced to framed
 * bytes between named peers. The simulator's network and the daemon's libp2p transport implement it; both
 * run `runTransportConformance` (transport-conformance.ts).
 *
 * Contract:
 * - `send(peer, bytes)` queues one frame to a peer that is up. It throws a TransportError
 *   `peer_unavailable` when the peer is not up, `frame_too_large` above `maxFrameBytes` (the
 *   frame is then never delivered), and `closed` after `close()`. Delivery is best effort: a
 *   frame may be lost on a lossy link; it is never altered, and it arrives whole or not at all.
 * - A frame delivered by `onMessage(from, bytes)` was sent by the transport peer `from` (a
 *   secure transport, such as libp2p with Noise, authenticates the link; the sync session then
 *   binds an account to it). The bytes belong to the handler.
 * - `drain(peer)` is backpressure: undefined while the bytes queued to the peer (sent, not yet
 *   taken by the network) are below the transport's watermark, else a promise that resolves
 *   once they fall below it, or settles (either way) when the link goes down or the transport
 *   closes. A sender that waits for it before sending more never holds more than about the
 *   watermark plus one frame in the transport's queue, and never overflows it.
 * - When `ordered` is true, frames on one link arrive in the order sent.
 * - `onPeerUp(peer)` fires when a link to `peer` is usable, `onPeerDown(peer)` when it is gone;
 *   each up is followed by at most one down before the next up.
 * - `close()` takes this peer off the network: remote peers see it go down, no handler of this
 *   transport fires afterwards, and `send` throws `closed`.
 * Handlers may return a promise; a transport that can (the simulator) waits for it before
 * delivering the next event, so processing is sequential and reproducible.
 * - `onUpcoming(from, bytes)` (optional, a hint): a frame has arrived whole and waits behind the
 *   one being handled; `onMessage` delivers the same bytes later, unless the link goes down
 *   first. A transport tells of each frame at most once, and only of the next one in line per
 *   peer, so a handler that starts work ahead for it (SyncSession.upcoming) holds at most one
 *   frame's worth per peer. A transport that delivers one event at a time (the simulator)
 *   leaves it out.
 */
export interface Transport {
  /** This peer's id on the network. */
  readonly peerId: string
  /** Largest frame `send` accepts. */
  readonly maxFrameBytes: number
  /** Whether frames on one link arrive in the order sent. */
  readonly ordered: boolean
  send(peer: string, bytes: Uint8Array): void
  /** Backpressure (see the contract above); a transport without it may leave it out. */
  drain?(peer: string): Promise<void> | undefined
  onMessage(handler: (from: string, bytes: Uint8Array) => void | Promise<void>): void
  /** Told of the next frame in line from a peer (see the contract above); a transport may leave it out. */
  onUpcoming?(handler: (from: string, bytes: Uint8Array) => void): void
  onPeerUp(handler: (peer: string) => void | Promise<void>): void
  onPeerDown(handler: (peer: string) => void | Promise<void>): void
  /** Peers whose link is up now. */
  peers(): string[]
  close(): Promise<void>
}

export type TransportErrorCode = 'peer_unavailable' | 'frame_too_large' | 'closed'

export class TransportError extends Error {
  constructor(
    readonly code: TransportErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'TransportError'
  }
}
