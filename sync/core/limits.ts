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
} as const
