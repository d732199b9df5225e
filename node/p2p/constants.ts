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
  /** Received frames waiting for the handler before we stop reading from that peer. */
  maxQueuedFrames: 64,
  /** Streams of our protocol one connection may open at once. */
  maxStreamsPerConnection: 4,
} as const
