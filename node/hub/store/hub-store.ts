/**
 * What the hub keeps, and the one interface both of its stores implement.
 *
 * The hub is an always-on peer that holds the ciphertext of a team's spaces without any read key:
 * the signed, encrypted changes of each space's DAG (verified by the hub before they get here)
 * and the encrypted blocks of their files. It cannot read either, so the store treats them as
 * opaque bytes under ids the caller has checked.
 *
 * Two stores: SQLite (sqlite-hub-store.ts) for one hub process with nothing to set up, and
 * PostgreSQL (pg-hub-store.ts) for any number of hub processes behind one address sharing one
 * database. Both pass one conformance suite (conformance.ts), so the hub's code above them never
 * asks which one it has. docs/hub-store.md describes the schema, durability and notifications.
 */

/** A change as the hub receives it: its id (the hash the DAG names it by), its tree, its bytes. */
export interface HubChange {
  id: string
  treeId: string
  raw: Uint8Array
}

/**
 * A change as the store gives it back, with the position the store gave it. A device that
 * follows a space keeps the last seq it has seen and asks for what came after: seq is the cursor.
 */
export interface StoredChange extends HubChange {
  seq: number
}

/**
 * Told that a space has new changes, up to `lastSeq`. `local` is true in the process whose
 * appendChanges stored them, false when another process sharing the store did: a hub process
 * forwards another process's appends to the devices connected to it.
 */
export interface AppendListener {
  (spaceId: string, lastSeq: number, local: boolean): void
}

export interface SpaceStats {
  changes: number
  /** Total bytes of the changes' raw bytes. */
  bytes: number
  /** The highest seq of the space's changes, 0 when it has none. */
  lastSeq: number
}

/** What an account's quotas count. */
export interface HubUsage {
  /** Spaces the account registered. */
  spaces: number
  /** Bytes of those spaces: their changes' raw bytes and their blocks' bytes. */
  bytes: number
}

export interface HubTotals {
  /** Spaces the store holds anything of (changes or blocks). */
  spaces: number
  changes: number
  /** Bytes of all changes' raw bytes. */
  bytes: number
  blocks: number
  blockBytes: number
}

export interface HubStore {
  readonly name: 'sqlite' | 'postgres'

  /**
   * Stores verified changes of a space. Idempotent by (spaceId, id): a change already stored (or
   * twice in one call) is skipped, so a device may resend a batch after a lost answer. Resolves
   * once the new changes are durable (they survive the hub process being killed with SIGKILL),
   * with how many were new. When any were new, every process sharing the store hears it through
   * onAppend: this one (local: true) before the promise resolves, the others (local: false) when
   * the commit reaches them.
   *
   * The seqs of a space's changes grow in the order they become visible: a reader that saw seq N
   * never later finds a new change of that space below N, whichever process stored it. So a
   * cursor over changesSince misses nothing.
   */
  appendChanges(spaceId: string, changes: readonly HubChange[]): Promise<number>
  /** Changes of a space with seq > after, in ascending seq, at most `limit`. seq only grows (one sequence for all spaces). */
  changesSince(spaceId: string, after: number, limit: number): Promise<StoredChange[]>
  /** Per space: number of changes, their total raw bytes, and the highest seq (all 0 when none). */
  spaceStats(spaceId: string): Promise<SpaceStats>

  /**
   * Encrypted file blocks, kept per space: a space's quota counts its blocks, and a block is
   * served only to who may read that space. A block id is the base58 SHA-256 of its bytes; the
   * caller checks that. Returns true when newly stored.
   */
  putBlock(spaceId: string, id: string, bytes: Uint8Array): Promise<boolean>
  getBlock(spaceId: string, id: string): Promise<Uint8Array | undefined>
  /** Which of these blocks the space has, in the order asked. */
  hasBlocks(spaceId: string, ids: readonly string[]): Promise<boolean[]>

  /** Accounts the operator admitted (by the config allowlist or a signed admission token). Admitting again records the latest. */
  admit(account: string, via: 'config' | 'token', at: number): Promise<void>
  admitted(account: string): Promise<boolean>
  /** Ends an admission and drops the account's registrations with it (in one transaction). */
  revoke(account: string): Promise<void>

  /**
   * A device of an admitted account asks the hub to keep a space. Idempotent (the first `at`
   * stays). Rejects when the account is not admitted: checked in the same transaction as the
   * insert, so a registration never outlives a revoke that raced it.
   */
  register(account: string, spaceId: string, at: number): Promise<void>
  unregister(account: string, spaceId: string): Promise<void>
  /** The spaces an account registered, sorted (by UTF-8 bytes, as everywhere in the store). */
  registrations(account: string): Promise<string[]>
  /** The accounts that registered a space, sorted. */
  registrants(spaceId: string): Promise<string[]>
  /** Spaces with at least one registrant, sorted: what the hub keeps following. */
  keptSpaces(): Promise<string[]>
  /** What an account's quotas count: spaces it registered, and the bytes (changes + blocks) of those spaces. Read from per-space counters, never by scanning changes. */
  usage(account: string): Promise<HubUsage>
  /** For /health and metrics. */
  totals(): Promise<HubTotals>

  /**
   * Hears appends with new changes by any process sharing this store (PostgreSQL: LISTEN/NOTIFY
   * on one dedicated connection, reconnecting with backoff if it drops, and then reporting the
   * spaces that grew meanwhile; SQLite: this process only). A listener that throws is logged and
   * does not fail the append. Returns the function that stops listening.
   */
  onAppend(listener: AppendListener): () => void
  close(): Promise<void>
}

/** An error register answers for an account the operator has not admitted (or has revoked). */
export class NotAdmittedError extends Error {
  constructor(readonly account: string) {
    super(`account ${account} is not admitted to this hub`)
    this.name = 'NotAdmittedError'
  }
}
