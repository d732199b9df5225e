/** Bounds on the text kind (sync/crdt/ytext.ts); a peer's op beyond them is dropped or malformed. */
export const YTEXT_LIMITS = {
  /** One update's bytes (base64 in the op is 4/3 of this): a paste of about 48 KB of text. */
  maxUpdateBytes: 64 * 1024,
  /** The writer salt's length (chars). */
  maxSaltLength: 64,
} as const
