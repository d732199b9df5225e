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
  /** An exchange ends after this many steps (each side counts the steps it answers). */
  maxHops: 24,
  /** Exchanges this peer has opened and not seen end, per remote peer. */
  maxOpenExchanges: 64,
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
