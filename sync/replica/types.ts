/** A change as it travels: the claimed id and the signed bytes, checked against each other. */
export interface IngestItem {
  id: string
  raw: Uint8Array
}

/**
 * What `ingest` takes: an item whose id may be left out, in which case the check stage sets
 * `id` from the bytes (hashing them is part of decoding anyway, and runs where the stage yields
 * to the event loop).
 */
export interface RawItem {
  id?: string
  raw: Uint8Array
}

/**
 * Why a change was refused. Stable strings: they are counted per peer and surface in debug
 * routes and the protocol's drop counters.
 */
export type RejectReason =
  | 'malformed' // not a well-formed change or payload
  | 'bad_id' // claimed id is not the hash of the bytes
  | 'bad_signature' // signature does not verify for the author
  | 'wrong_space' // change belongs to another space
  | 'not_member' // author has no role at the cited ACL head
  | 'read_only' // author is a reader or guest at the cited ACL head
  | 'bad_read_key' // payload not sealed under the read key current at the cited ACL head
  | 'no_read_key' // this replica cannot reach that read key
  | 'bad_payload' // payload does not open under its read key
  | 'bad_lamport' // lamport not above every parent's
  | 'stale_acl_head' // cites an ACL state older than a parent's

export interface IngestReport {
  accepted: string[]
  rejected: Array<{ id: string; reason: RejectReason }>
  /** Ids this replica needs before changes it holds back can be applied. */
  missing: string[]
  /** Accepted into the DAG, but their ops do not apply: written by a member after removal. */
  voided?: string[]
  /**
   * Derived roots neither applied nor refused: held until a writer's change builds on one or
   * this replica expects its seed (see DerivedRoots).
   */
  held?: string[]
}

/** What a replica holds in bounded in-memory sets, for tests and status. */
export interface ReplicaMemory {
  parkedChanges: number
  parkedBytes: number
  /** Parked changes looked at since open (woken, replaced, evicted). */
  parkedExamined: number
  parkedEvicted: number
  heldDerivedRoots: number
  heldDerivedBytes: number
  cachedRecords: number
  cachedRecordBytes: number
  recordEvictions: number
}

/** The spec's write result (core.md "Write result"). */
export interface WriteResult {
  versionId: string
  changeId: string
  recordIds: string[]
  rejections?: WriteRejection[]
}

export interface WriteRejection {
  recordId: string
  index: number
  code: string
  reason: string
}

/** A record a commit changed, with the set/unset ops merge applied to it (in stamp order). */
export interface RecordTouch {
  treeId: string
  ds: string
  id: string
  ops: Array<{ type: '$set'; path: string; value: unknown } | { type: '$unset'; path: string }>
}

/** What one committed batch changed: for live queries, head sync's index and status. */
export interface CommitInfo {
  /** This replica's apply sequence after the batch. */
  versionId: string
  /** Written here (a local write), not received from a peer. */
  local: boolean
  changeIds: string[]
  treeIds: string[]
  records: RecordTouch[]
  /** Trees whose records were re-derived wholesale (a late removal): re-read them. */
  rebuiltTrees: string[]
}
