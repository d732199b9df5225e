/**
 * Every bound of the event bus (chat.md Limits, "Event envelope"), in one place: what a local
 * client may publish and subscribe to, and what a peer may send us over `/svc/events/1.0.0`.
 */
export const EVENTS = {
  /** libp2p protocol id of network-scope events; the version moves with any wire change. */
  protocol: '/svc/events/1.0.0',
  maxTypeChars: 128,
  maxTargetChars: 128,
  /** `data` marshaled as JSON (chat.md: 64 KiB). */
  maxDataBytes: 64 * 1024,
  /** Type plus target, in UTF-8 bytes and dot-separated segments (the target counts as one). */
  topicBudgetBytes: 256,
  topicBudgetSegments: 16,
  /** Distinct filters (interests) per space, shared across the process. */
  maxPatternsPerSpace: 100,
  /** Values of one repeated subscribe parameter (scope, spaceId, type, target). */
  maxFilterValues: 64,
  /** Events a subscriber's stream may hold for a slow reader before it is closed with `overflow`. */
  subscriberBuffer: 16,
  /** Network publish rate per peer, both ways: a burst, then one more every refillMs (30/s). */
  publishBurst: 60,
  publishRefillMs: 1000 / 30,
  /** Largest frame of the events protocol: a sealed 64 KiB payload and its envelope. */
  maxFrameBytes: 96 * 1024,
  /**
   * A peer's frames waiting for the receiver before we stop reading its stream, and what may
   * wait in our send buffer to one peer before its stream is reset: a peer costs at most about
   * 16 frames plus one stream window of memory, never more.
   */
  maxQueuedFrames: 16,
  maxQueuedSendBytes: 4 * 1024 * 1024,
  sendWatermarkBytes: 512 * 1024,
  /** Event ids remembered to deliver each at most once (LRU beyond it). */
  dedupeIds: 8192,
  /** Sender timestamps further than this from our clock are dropped (no late replays). */
  maxClockSkewMs: 60_000,
  /** Processes published on the bus that we track at once (oldest evicted). */
  maxTrackedProcesses: 1024,
  /** A published process that has not reported for this long is no longer listed. */
  processIdleMs: 10 * 60_000,
} as const
