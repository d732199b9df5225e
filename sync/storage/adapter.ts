/**
 * The one storage interface every replica runs on: a set of named key-value stores with
 * ordered keys, read by key or by range, written only through atomic batches. A change and its
 * materialized effect go into one batch, so after a crash either both are there or neither is.
 *
 * Keys are strings compared by their UTF-8 bytes (SQLite BINARY order, the order of memory and
 * IndexedDB for every key svc writes: ids are base58/ASCII and separators are ASCII).
 * Values are opaque bytes.
 */
export interface StorageAdapter {
  /** Short name for logs and benchmark output: 'memory', 'indexeddb', 'sqlite'. */
  readonly name: string
  get(store: string, key: string): Promise<Uint8Array | undefined>
  getMany(store: string, keys: readonly string[]): Promise<Array<Uint8Array | undefined>>
  /** Entries in ascending key order (descending with `reverse`), filtered by the options. */
  scan(store: string, options?: ScanOptions): Promise<Array<[string, Uint8Array]>>
  /**
   * Applies every put and delete, all or nothing. Resolved means it survives a crash of the
   * process (kill -9); adapters may offer stronger settings against power loss.
   */
  commit(batch: WriteBatch): Promise<void>
  close(): Promise<void>
}

export interface ScanOptions {
  /** Only keys starting with this string. */
  prefix?: string
  /** Only keys strictly greater than this. */
  gt?: string
  /** Only keys strictly less than this. */
  lt?: string
  limit?: number
  reverse?: boolean
}

export interface WriteBatch {
  puts: Array<{ store: string; key: string; value: Uint8Array }>
  dels: Array<{ store: string; key: string }>
}

export const emptyBatch = (): WriteBatch => ({ puts: [], dels: [] })

/** Store names used by the replica. Adapters must accept any store name. */
export const STORES = {
  changes: 'changes',
  trees: 'trees',
  records: 'records',
  meta: 'meta',
  /** Change ids by the local number stored records name them with (sync/replica/change-numbers.ts). */
  changeNums: 'changeNums',
} as const
