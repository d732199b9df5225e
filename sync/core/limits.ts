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
  /** Largest sealed profile (name, description, icon) one `profile` record carries. */
  maxProfileBytes: 16 * 1024,
  /** Most invites one `uninvite` record revokes (a manager revoking more writes several). */
  maxUninviteIds: 1024,
  /**
   * Join requests a replica takes in through the join message while they are pending (not yet
   * accepted, declined or cancelled): past it, a join is refused like one for an unknown space.
   * Joins need a valid invite proof, so only token holders can send them; this bounds what one
   * leaked token costs until a manager revokes it.
   */
  maxPendingJoinRequests: 256,
  /**
   * Join requests (any status) the join entry takes from one account in one space: joining,
   * withdrawing and joining again is two records kept for good per round.
   */
  maxJoinRequestsPerJoiner: 16,
  /** ACL states kept per space for the heads changes cite (each is immutable once computed). */
  aclStateCache: 64,
  /**
   * Pending one-to-one rows an offer may add (sync/space/one-to-one.ts): any account may offer
   * its pair space and identities cost nothing to mint, so past this many pending ones a new
   * offer is ignored (the user can still register or start one).
   */
  maxPendingOneToOne: 256,
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
  /**
   * Change numbers (sync/replica/change-numbers.ts) kept in memory, each way: those of recently
   * written and read records. About 150 bytes each, so at most about 15 MB; one that has left
   * is read again when a record names it, or numbered again when a record is written.
   */
  maxCachedChangeNumbers: 100_000,
  /**
   * Where the env can yield (the daemon), an ingest commits what it has applied and gives the
   * event loop a turn after this many changes or this many milliseconds, whichever comes first:
   * a sync step carries a few thousand changes, about 100 ms of apply work on the dev VM. Each
   * slice is one atomic commit, so readers never see part of one. 10 ms keeps `GET /v1/health`
   * well under its 50 ms target; the count bounds a slice where the clock is coarse.
   */
  applySliceChanges: 1024,
  applySliceMs: 10,
  /** The check stage (decoding, ids) yields as often, outside the serial queue. */
  checkSliceItems: 512,
  /**
   * Where the env can yield, an ingest applies its checked changes in chunks of this many, each
   * as soon as its signatures are checked: the thread pool verifies the next chunks while one
   * applies, instead of idling through the apply of a whole sync step.
   */
  ingestChunkItems: 512,
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

/**
 * Bulk object create (`POST {S}/objects/batch`): objects one request may create. Each is two
 * signed changes (its root and its row); 1,000 small objects are a few hundred kilobytes of
 * body, well within the 1 MB limit.
 */
export const MAX_OBJECTS_PER_CREATE = 1_000
/**
 * Objects a bulk create writes per turn of the replica's serial queue (one apply batch, so one
 * commit unless the apply runs past its slice): other writers of the space wait at most one
 * page, about 10 ms of signing and merging.
 */
export const OBJECT_CREATE_PAGE = 100

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

/** Bounds of the account-level sharing flows (sync/space/sharing). */
export const SHARING_LIMITS = {
  /** Spaces offered by peers and opened to fetch their ACL, not yet listing this account. */
  maxOffersInFlight: 16,
  /** `invite_pending` rows one offering identity may leave (a member cannot flood our list). */
  maxPendingRowsPerIdentity: 64,
  /** Identities one `POST {S}/acl/add` may name. */
  maxAddPerRequest: 100,
} as const
