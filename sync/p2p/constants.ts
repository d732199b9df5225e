/** Every tunable of the P2P node in one place. */
export const P2P = {
  /** Head sync's protocol id; the version moves with any incompatible message change. */
  headSyncProtocol: '/svc/headsync/1.0.0',
  mdnsServiceTag: 'svc-local',
  mdnsIntervalMs: 2_000,
  maxConnections: 64,
  /** Largest frame accepted or sent (a sync message carries batches of changes). */
  maxFrameBytes: 4 * 1024 * 1024,
  /**
   * Bytes a peer may leave unread in our send buffer before its stream is reset: a slow or
   * stalled peer costs at most this much memory, then the link goes down and sync retries.
   */
  maxQueuedSendBytes: 16 * 1024 * 1024,
  /**
   * Backpressure: once this many bytes wait in a peer's send buffer, `drain` asks the sender to
   * wait for the peer to take them (far below maxQueuedSendBytes, so a sender that waits never
   * gets its stream reset).
   */
  sendWatermarkBytes: 1024 * 1024,
  /**
   * Yamux's receive window per stream: the most a peer can have in flight to us on one stream,
   * and so the largest chunk one read delivers. A peer's undecoded bytes stay under one largest
   * frame plus this. Not yamux's 16 MiB default: libp2p's connection monitor pings through the
   * same connection, and a ping queued behind 16 MiB that a busy receiver drains slowly timed
   * out and aborted connections mid-sync (the LAN backlog bench).
   */
  maxStreamWindowBytes: 2 * 1024 * 1024,
  /**
   * Largest WebSocket message a browser peer may send (libp2p-node.ts, capWebSocketMessages):
   * its Noise frames are at most 64 KiB each; this leaves room for a few per message.
   */
  maxWebSocketMessageBytes: 1024 * 1024,
  /** Received frames waiting for the handler before we stop reading from that peer. */
  maxQueuedFrames: 64,
  /** Streams of our protocol one connection may open at once. */
  maxStreamsPerConnection: 4,
  /**
   * A peer's frames are handled in batches: after this many, or after this long, the reading
   * loop yields to the event loop (timers, the HTTP API and other peers run in between).
   */
  framesPerYield: 32,
  yieldAfterMs: 10,
  /**
   * Answer steps whose ingest may still run while the next message is read (SyncSession
   * `ingestAhead`). Off: 2 raised lanBacklogVsCryptoBound from 0.61-0.68 to 0.70-0.77, but the
   * daemon answered `GET /v1/health` later while it ingested (hostile bench p99 under flood
   * 47-51 ms against 38-44 ms, target 50; during an honest backlog 100-260 ms against 143-166 ms).
   * docs/protocol.md 7a has the figures.
   */
  ingestAhead: 0,
  /**
   * Misbehaviour (sync/p2p/peer-guard.ts): every malformed or refused message scores one fault
   * (bad framing scores maxPeerFaults at once). A peer reaching maxPeerFaults is disconnected
   * and refused for peerBackoffBaseMs, doubling with every further back-off up to
   * peerBackoffMaxMs. The score drains by peerFaultLeakPerSec, so an honest peer's occasional
   * refusal (a stale reply, a space it was removed from) never adds up.
   */
  maxPeerFaults: 64,
  peerFaultLeakPerSec: 1,
  peerBackoffBaseMs: 30_000,
  peerBackoffMaxMs: 60 * 60_000,
  /** Peers remembered at once by each per-peer table a stranger can add to (LRU beyond it). */
  maxTrackedPeers: 1024,
  /** A connected peer that has not proved an account this long after connecting is hung up on. */
  authTimeoutMs: 30_000,
  /**
   * Peers added by address (`POST /v1/peers`, config key `peers`): at most maxAddedPeers, kept
   * in the account directory's peersFile (mode 0600). One not connected is dialled again after
   * redialBaseMs, doubling with every failed dial up to redialMaxMs; a connection resets it.
   */
  maxAddedPeers: 256,
  maxMultiaddrLength: 512,
  peersFile: 'peers.json',
  /**
   * The TCP port the node last listened on, in the account directory: a listen address with
   * port 0 (the default) takes it again at the next start, so peers that added this device by
   * address find it after a restart; any free port when it is taken (issue 39, item 4).
   */
  portFile: 'p2p-port.json',
  redialBaseMs: 1_000,
  redialMaxMs: 5 * 60_000,
} as const
