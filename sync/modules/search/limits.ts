/** Bounds of the search module (docs/search.md "Limits"). */
export const SEARCH_LIMITS = {
  /** Most scopes in one request (spec: scopes are slugs, at most 64). */
  maxScopes: 64,
  /** A scope slug. */
  scopeRe: /^[a-z0-9_-]{1,64}$/,
  /** Longest query string, in UTF-16 units (longer is 400 request.invalid_field). */
  maxQueryChars: 1_024,
  /** Most `require` / `exclude` terms each. */
  maxTerms: 32,
  /** Default and largest `limit`. */
  defaultLimit: 20,
  maxLimit: 200,
  /** Text of one indexed document kept for indexing (longer text is cut here). */
  maxDocChars: 65_536,
  /** The background drain starts once commits pause this long (indexing yields to a burst). */
  drainQuietMs: 100,
  /** ...or once this many objects and records wait, so what waits stays bounded. */
  maxDeferred: 200_000,
  /** Objects indexed per step of the background drain before yielding the event loop. */
  drainBatch: 2_000,
  /**
   * The deltas are compacted into a new base once they hold more operations than this, or
   * than `compactFraction` of the base's documents: a load replays at most that many (a replay
   * re-tokenizes, a base load does not), and the work of compacting stays linear overall.
   */
  compactAfterOps: 10_000,
  compactFraction: 0.25,
  /**
   * Once commits have paused this long and the deltas hold at least `compactIdleOps`
   * operations, they are compacted into a new base: a restart then loads a base and replays
   * little (replaying re-tokenizes: 3.4 s of a 7.3 s restart at 100k objects right after a
   * sync backlog). Below that many, a replay costs less than rewriting the base.
   */
  compactIdleMs: 2_000,
  compactIdleOps: 2_000,
  /**
   * What closing a space (a daemon stop) spends at most draining the commits still pending
   * into the index; past it the stop goes on and the next start rebuilds (a drain of a whole
   * 200k-object backlog takes about this long on two cores).
   */
  closeBudgetMs: 10_000,
  /**
   * The index leaves memory once nothing has searched it (nor a `$text` filter used it) for
   * this long; the next use loads it from disk (a base, not re-tokenized, plus the deltas
   * since). A space nobody searches then costs no memory for its index.
   */
  residentIdleMs: 10 * 60_000,
  /**
   * Operations the deltas may hold while the index is on disk (a space nobody searches):
   * past this many, once commits pause, it is loaded and compacted (and leaves memory again),
   * so the first search after a long unsearched stretch replays at most about this many.
   */
  maxOpsOnDisk: 500_000,
  /** Bytes per base chunk in storage. */
  chunkBytes: 1 << 20,
  /** Characters either side of the first match in a snippet. */
  snippetRadius: 80,
  /** Texts per embeddings request. */
  embedBatch: 32,
  /** Embedder request timeout. */
  embedTimeoutMs: 10_000,
  /** Largest vector dimension accepted from an embedder. */
  maxDims: 4_096,
  /**
   * Vectors searched by brute force (cosine over every vector): past this many the space's
   * vector search answers from the first `maxVectors` only and the backfill stops (documented).
   */
  maxVectors: 200_000,
  /** Fusion constant of reciprocal rank fusion (the usual 60). */
  rrfK: 60,
  /** Candidates each list contributes to hybrid fusion. */
  fuseDepth: 100,
  /** Ids a `$text` filter resolves to at most (beyond: the filter matches the first ones by score). */
  maxTextIds: 100_000,
} as const

/** Store names of the module in the replica's storage adapter (the adapter accepts any name). */
export const SEARCH_STORES = {
  /** `<spaceId>/meta`, `<spaceId>/base/<gen>/<chunk>`, `<spaceId>/delta/<gen>/<seq>`. */
  fts: 'search_fts',
  /** `<spaceId>/<model>/<docKey>` -> float32 bytes. */
  vectors: 'search_vectors',
} as const

/** Account-private space settings the module reads (`PATCH {S}/settings`). */
export const SEARCH_SETTINGS = {
  /** `true` turns indexing off for the space (search answers 409 index.disabled). */
  disabled: 'indexDisabled',
  /** OpenAI-compatible embeddings endpoint, e.g. `http://127.0.0.1:11434/v1/embeddings`. */
  embedUrl: 'searchEmbedUrl',
  /** Model name sent with every embeddings request. */
  embedModel: 'searchEmbedModel',
} as const
