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

/*
 * API limits (spec "Limits" and the bounds svc chose where the spec names none). Each is one
 * constant: the request schemas (server/schemas) put them in the OpenAPI document and Ajv
 * enforces them; the query engine and the SSE layer read the same ones.
 */

/** Request body, every route (spec: 1 MB). */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024

/** Subscriber mailbox: frames held for a slow reader before the stream closes with `overflow`. */
export const DEFAULT_MAILBOX_CAPACITY = 256
export const MIN_MAILBOX_CAPACITY = 16
export const MAX_MAILBOX_CAPACITY = 65_536

/** Live windows: how far a window may run short before a fresh snapshot (percent of `limit`). */
export const DEFAULT_DRIFT_BUDGET_PERCENT = 30
export const MAX_DRIFT_BUDGET_PERCENT = 100

/** Largest `limit` of a query page. */
export const MAX_QUERY_LIMIT = 10_000

/** Longest id, dataset name or other caller-chosen name in a request. */
export const MAX_NAME_LENGTH = 256
/** Longest dotted path (query paths, op paths, block paths). */
export const MAX_PATH_LENGTH = 1024
/** Trace ids one write may carry. */
export const MAX_TRACE_IDS = 64
/** Records one `delete-records` call may name. */
export const MAX_RECORD_IDS_PER_DELETE = 10_000

/** Upsert: records per change (spec: default 500). */
export const DEFAULT_UPSERT_PAGE_SIZE = 500
export const MAX_UPSERT_PAGE_SIZE = 10_000

/** History list `limit` (spec: default 50, cap 200). */
export const DEFAULT_HISTORY_LIMIT = 50
export const MAX_HISTORY_LIMIT = 200

/** Streams: a `: keepalive` comment after this long idle (spec: about every 25 s). */
export const SSE_KEEPALIVE_MS = 25_000
/** A closed stream whose reader does not take the last bytes is cut after this long. */
export const SSE_CLOSE_GRACE_MS = 10_000

/** Longest display text (names, descriptions). */
export const MAX_TEXT_LENGTH = 4096
/** Longest short key (layouts, setting keys, derived-space names). */
export const MAX_KEY_LENGTH = 128
/** Types one object (or bundle root) may carry, and parts one bundle may declare. */
export const MAX_TYPES_PER_OBJECT = 64
export const MAX_PARTS_PER_REQUEST = 64
/** Property drafts one bundle may declare; setting keys one patch may unset. */
export const MAX_ITEMS_PER_REQUEST = 256

/** Event subscriber buffer (spec: 16): sync, members, identities and file status forwarders. */
export const EVENT_SUBSCRIBER_BUFFER = 16
/** Longest mnemonic phrase accepted (24 words fit many times over). */
export const MAX_MNEMONIC_LENGTH = 1024
