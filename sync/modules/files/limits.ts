/**
 * The files module's numbers (docs/files.md "Limits"). Kept here, not in the central limits, so
 * the module is one folder.
 */
export const FILES = {
  /** Plaintext bytes per block: every block but a file's last is exactly this long. */
  blockSize: 1024 * 1024,
  /** Files of at most this many bytes are inline: their bytes sit in the record, no blocks. */
  inlineMax: 64 * 1024,
  /**
   * Largest attach body. The record lists 64 bytes per block (id and key), so 1 GiB is 1024
   * blocks, about 90 KB of record, well inside one change (2 MB).
   */
  attachMax: 1024 * 1024 * 1024,
  /** File name and media type bounds (record fields). */
  nameMax: 255,
  mimeMax: 255,
  /** Grace before a block no live record references is deleted by a sweep. */
  graceMs: 60 * 60 * 1000,
  /** A fetch of one block gives up after this long without an answer from a peer. */
  blockTimeoutMs: 30_000,
  /** Fetch rounds of a pinned file before its state turns `limited`. */
  pinAttempts: 3,
  /** Status frames buffered per subscriber (spec Limits: 16), then `lagged`. */
  statusBuffer: 16,
  /** Image variant widths (`?variant=w<width>`), the only ones accepted. */
  variantWidths: [64, 128, 256, 512, 1024, 2048] as readonly number[],
  /** Images larger than this are not resized (sharp decodes the whole image in memory). */
  variantSourceMax: 64 * 1024 * 1024,
} as const
