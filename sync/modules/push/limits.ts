/**
 * Push limits (chat.md "Limits", push rows) and the push node's own bounds. Kept beside the
 * module rather than in the central limits file: only push reads them.
 */
export const PUSH_LIMITS = {
  /** Runes of message text kept in a payload. */
  payloadTextRunes: 1024,
  /** Send attempts, and the pause between them. */
  sendAttempts: 6,
  sendRetryMs: 10_000,
  /** The reconcile loop's tick. */
  reconcileTickMs: 5 * 60_000,
  /**
   * A held subscription unchanged this long is sent again: the node evicts registrations idle
   * past its TTL (`idleTtlMs`, 14 days by default), so a quiet space must not lose its topics.
   */
  subscriptionRefreshMs: 24 * 3600_000,
  /** Sealed payload bytes a send may carry (the node refuses more). */
  maxSealedBytes: 4096,
  /** Topics one token may hold under one space key. */
  maxTopicsPerSpaceToken: 2048,
  /** Tokens one space key may hold at the node (one per member device, with headroom). */
  maxTokensPerSpaceKey: 4096,
  /** A signed request older or newer than this (node clock) is refused as a replay. */
  requestSkewMs: 10 * 60_000,
  /** Registrations (subscribe/unregister) per space key and per peer: burst, then per minute. */
  registrationsBurst: 60,
  registrationsPerMinute: 60,
  /** Sends per space key and per peer: burst, then per minute. */
  sendsBurst: 600,
  sendsPerMinute: 600,
} as const
