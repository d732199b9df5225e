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
  /** Images larger than this are not resized: the source is read whole before it is decoded. */
  variantSourceMax: 64 * 1024 * 1024,
  /**
   * Images of more pixels than this are not resized, whatever their format (read from the
   * header before anything is decoded). 50 MP keeps an 8000 x 6000 camera photo; a 10000 x
   * 10000 PNG of 400 KB, which takes hundreds of MB to decode, is refused.
   */
  variantPixelsMax: 50_000_000,
  /**
   * Formats libvips cannot decode a strip at a time (interlaced PNG, progressive JPEG, WebP,
   * GIF, AVIF) hold the whole decoded image: at most this many bytes of it, so the variants in
   * flight stay within the daemon's memory budget (docs/files.md "Variants").
   */
  variantDecodeMax: 48 * 1024 * 1024,
  /** Variant processes at once per daemon; more requests wait their turn. */
  variantConcurrency: 2,
  /** A variant process that takes longer than this is killed (file.variant_invalid). */
  variantTimeoutS: 20,
  /**
   * A variant process resident past this is killed: Node itself (about 60 MB), the source read
   * whole (up to variantSourceMax), what libvips decodes (variantDecodeMax, or the strips of a
   * streamed format) and the output, with room to spare. A safety net: the caps above are
   * what keep a process well under it.
   */
  variantProcessRssMax: 384 * 1024 * 1024,
} as const
