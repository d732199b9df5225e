import { LIMITS } from '../core/limits.ts'

/** Version of the head-sync wire format (the first field of every message). */
export const PROTOCOL_VERSION = 1

/**
 * Every bound of the head-sync protocol, in one place (docs/protocol.md, "Limits"). A message
 * that breaks one of them is dropped with a counted reason before anything else looks at it.
 */
export const SYNC_LIMITS = {
  /** Largest encoded message accepted or sent: a largest change plus framing fits. */
  maxMessageBytes: LIMITS.maxChangeBytes + 64 * 1024,
  /** Changes are packed into messages of at most this size (a larger single change goes alone). */
  targetMessageBytes: 1024 * 1024,
  /** Most range items in one step. */
  maxRangeItems: 4096,
  /** Most elements listed in one range item. */
  maxRangeElements: 4096,
  /** A range is split into at most 2^maxSplitBits children. */
  maxSplitBits: 8,
  /** Most child fingerprints over all the range items of one step (bounds the work a step asks). */
  maxRangeChildren: 65_536,
  /** Positions are 32-bit, so a range prefix is at most 32 bits long. */
  maxPrefixBits: 32,
  /** Most trees in one heads section. */
  maxHeadsItems: 4096,
  /** Most heads listed for one tree. */
  maxHeadsPerTree: 1024,
  /** Most sampled ancestors in one heads item (1, 2, 4, ... back: 32 covers 2^32 changes). */
  maxHaveSample: 32,
  /** Most wanted positions in one step. */
  maxWants: 4096,
  /** Most changes in one step. */
  maxChangesPerStep: 20_000,
  /**
   * An exchange ends after this many steps. The receiver counts the questions it answers in
   * each exchange itself (at most half of these); the sender's `hop` field is informative.
   */
  maxHops: 24,
  /** Exchanges this peer has opened and not seen end, per remote peer; and exchanges a peer opened with us that we remember (older ones are forgotten). */
  maxOpenExchanges: 64,
  /**
   * Enumeration one step may cost its receiver, in WORK_UNITS: range elements listed or
   * matched and child fingerprints computed (each a salted hash), DAG nodes walked for heads
   * items and wanted trees. Items past it are left out of the reply (they still differ, and a
   * later exchange finds them); the first item of a step is always answered. About 16k hashed
   * elements, or 262k DAG nodes.
   */
  maxStepWork: 262_144,
  /** The same, over every step of one exchange. */
  maxExchangeWork: 1_048_576,
  /**
   * ACL changes taken per step from a peer that may not read the space at our ACL state (a
   * new member proving membership): only the leading ACL-tree changes, up to this many; every
   * other change of that step is dropped before decoding and counted.
   */
  maxAclChangesFromNonReader: 1024,
} as const

/** What the work budgets count (maxStepWork, maxExchangeWork): a salted hash costs 16 DAG steps. */
export const WORK_UNITS = {
  /** One range element listed or matched, or one child fingerprint: one salted SHA-256. */
  hash: 16,
  /** One DAG node walked (a set lookup and a push). */
  dagNode: 1,
} as const

/** Bounds of the per-peer state a session and a driver keep (docs/protocol.md, "Limits"). */
export const PEER_LIMITS = {
  /** Links (challenges, stashes) of peers that have not authenticated, least recently used evicted. */
  maxUnauthenticatedLinks: 256,
  /** Counters of peers that have not authenticated, least recently used evicted. */
  maxStrangerCounters: 256,
  /** Counters of authenticated peers (kept while the link is up; evicted least recently used after). */
  maxPeerCounters: 4096,
  /** Reply streams queued to one peer behind the one being sent; past it, questions get `busy`. */
  maxQueuedReplies: 8,
  /** A reply whose peer has not taken a byte for this long is abandoned (ms). */
  sendStallMs: 30_000,
  /** The driver yields to the event loop after this many messages handled in a row. */
  messagesPerYield: 16,
  /** ... and after sending this many bytes of replies in a row without waiting for the peer. */
  bytesPerYield: 2 * 1024 * 1024,
  /** Per-space scheduler statistics kept per peer, least recently used evicted. */
  maxStatsPeersPerSpace: 256,
} as const

/**
 * Bounds of joining over the wire and of offers (docs/protocol.md, "Joining" and "Offers").
 * A responder's bounds are per peer and charged before it looks at whether it holds the space,
 * so they answer the same whatever it holds.
 */
export const JOIN_LIMITS = {
  /** Largest ACL change a `join` carries: a join record with its display metadata fits easily. */
  maxJoinChangeBytes: 16 * 1024,
  /** Joins a peer may send in a burst before the refill rate applies. */
  joinBurst: 8,
  /** One more join is allowed per this many ms (a joiner retries far more slowly). */
  joinRefillMs: 2_000,
  /** Joins we have sent that await an answer, per peer (older ones are forgotten). */
  maxPendingJoinsPerPeer: 64,
  /** Spaces a joiner repeats a join for at once. */
  maxActiveJoins: 64,
  /** The joiner's first retry delay; it doubles up to joinRetryMaxMs. */
  joinRetryBaseMs: 2_000,
  joinRetryMaxMs: 5 * 60_000,
} as const

export const OFFER_LIMITS = {
  /** Offers whose handler runs at once (each may open a space and fetch its ACL). */
  maxInFlight: 16,
  /** ... of which at most this many from one offering account. */
  maxInFlightPerIdentity: 4,
  /** Offers from one account in a burst before the refill rate applies. */
  burstPerIdentity: 16,
  /** One more offer from an account is taken per this many ms. */
  refillMsPerIdentity: 10_000,
  /**
   * Offers taken from all accounts together in a burst, then one per globalRefillMs: a stranger
   * mints accounts for the price of a key, so the per-account rate alone bounds nothing.
   */
  globalBurst: 64,
  globalRefillMs: 2_000,
  /** An offer of a (space, account) the handler has seen is not handed over again for this long. */
  repeatAfterMs: 5 * 60_000,
  /** Accounts and (space, account) pairs remembered for these bounds (least recently used evicted). */
  maxTracked: 1024,
} as const

/**
 * Bounds of the removal notice (docs/protocol.md, "Removal notice"): what a removed member can
 * draw from a peer by opening exchanges about the space it was removed from.
 */
export const NOTICE_LIMITS = {
  /** Notices one account may draw in a burst (over all its links and spaces)... */
  noticeBurst: 4,
  /** ... then one more per this many ms. */
  noticeRefillMs: 60_000,
  /** Spaces noticed per link and epoch (one notice each); past it the link gets none. */
  maxNoticedSpacesPerLink: 64,
} as const

/** Tuning of the range reconciliation (not part of the wire contract: any values interoperate). */
export const RANGE_TUNING = {
  /** A differing range with at most this many of our elements is listed instead of split. */
  leafMax: 40,
  /** Splits aim at ranges of about this many elements. */
  leafTarget: 12,
} as const

/** Sizes of fixed-width fields. */
export const ID_BYTES = 32
export const NONCE_BYTES = 16
export const SIGNATURE_BYTES = 64
export const ROOT_FP_BYTES = 8
export const RANGE_FP_BYTES = 4
export const ELEMENT_BYTES = 8
