/** Protocol and storage limits, in one place so every layer agrees on them. */
export const LIMITS = {
  /** Largest encoded change accepted from anywhere. The HTTP body limit is 1 MB. */
  maxChangeBytes: 2 * 1024 * 1024,
  /** Most heads one change may build on. */
  maxPrevIds: 256,
  /** Most ops in one change payload. */
  maxOpsPerChange: 10_000,
  /** Deepest nesting of a path or value accepted in an op. */
  maxPathDepth: 32,
  maxValueDepth: 64,
  /**
   * Most change ids a `remove` record may witness (the removed member's latest changes per
   * object tree). Beyond it the remover keeps the newest trees' ids; the member's earlier
   * writes in trees left out are void once the removal is known.
   */
  maxRemovalWitness: 16_384,
  /** Most concurrent older keys one rotation links (`others`), besides `prev`. */
  maxRotationLinks: 256,
  /** ACL states kept per space for the heads changes cite (each is immutable once computed). */
  aclStateCache: 64,
} as const

/**
 * Bounds on what one replica holds in memory for one space. Each is per space: a daemon holds
 * a replica per open space, so its total is these times the spaces it has open.
 */
export const REPLICA_LIMITS = {
  /**
   * Bytes of changes held back for a missing parent or ACL record, from any one origin (peer).
   * Honest parking is short-lived: head sync sends parents first, so a change parks only when
   * a message arrived before the one carrying its parent (messages are packed to about 1 MiB,
   * sync/protocol/limits.ts), and the session asks again at once. One largest change plus one
   * message of small ones fits, so any one honest change can always park; a peer that fills
   * its share evicts its own oldest changes, never another peer's.
   */
  maxParkedBytesPerOrigin: 2 * 1024 * 1024 + 1024 * 1024,
  /**
   * Bytes parked per space over all origins: a little under three origins' full shares. Past
   * it the oldest parked change goes, whoever sent it, so peer ids minted for free buy nothing
   * more than this.
   */
  maxParkedBytesPerSpace: 8 * 1024 * 1024,
  /**
   * Fixed cost charged per parked change on top of its bytes (decoded fields, map entries),
   * and per id it waits for: a flood of tiny changes is bounded by count as well as bytes.
   */
  parkedOverheadBytes: 512,
  parkedWaitOverheadBytes: 96,
  /**
   * Bytes of derived roots received from peers and held until a writer's change builds on one
   * or this replica expects its seed. A derived root is a few hundred bytes (a seed of at most a
   * few hundred characters), so this holds about a thousand: far more than the derived objects
   * a sync round of honest peers carries, and nothing a stranger can grow.
   */
  maxDerivedCandidateBytes: 256 * 1024,
  /**
   * Materialized records kept in memory. 50,000 records is five times the working set of the
   * core bench (1,000 objects x 10 records), so sync backlogs of that size never read a record
   * back; records are typically a few hundred bytes, so about 20-30 MB.
   */
  maxCachedRecords: 50_000,
  /** Bytes of encoded records kept in memory: bounds the cache when records are large. */
  maxCachedRecordBytes: 64 * 1024 * 1024,
} as const
