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
