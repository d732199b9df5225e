import { STORES, type StorageAdapter, type WriteBatch } from '../storage/adapter.ts'
import type { ChangeNumbers, NumbersFlushed } from './change-numbers.ts'
import {
  encodeStoredRecord,
  finishStored,
  numbersIn,
  parseStored,
  wholeRecord,
  type ChangeNumbering,
  type ParsedRecord,
  type StoredHead,
  type StoredRecord,
} from './record-codec.ts'
import { esc } from './storage-keys.ts'

const NO_NUMBERS: Pick<ChangeNumbering, 'idOf'> = {
  idOf: (n) => {
    throw new Error(`unexpected change number ${n}`)
  },
}

/**
 * The materialized records a replica has read or written, by storage key, bounded in count
 * and bytes. `null` marks a record deleted in the batch being built (its storage row is
 * deleted at commit).
 *
 * Eviction runs only at `trim()`, which the replica calls between batches, when every record
 * a batch changed is in storage: a record dirty in the batch being built is never evicted.
 */
export class RecordCache {
  /** In eviction order: records written by a batch move to the end, so hot records stay. */
  private readonly records = new Map<string, StoredRecord | null>()
  /** Encoded size of each cached record, as last read or written. */
  private readonly sizes = new Map<string, number>()
  private totalBytes = 0
  /**
   * Trees created on this replica since it opened whose records have all stayed in the cache:
   * a record missing from it does not exist and needs no storage read (an object arriving
   * whole from a peer, the common case in a sync backlog). Evicting one of a tree's records
   * takes the tree out of this set, so later misses read storage.
   */
  private readonly cachedTrees = new Set<string>()
  /** Per tree: record keys by `<ds>/<id>`, so each record has one key string (see keyIn). */
  private readonly recordKeys = new Map<string, Map<string, string>>()
  evictions = 0

  constructor(
    private readonly spaceId: string,
    private readonly storage: StorageAdapter,
    private readonly max: { count: number; bytes: number },
    /** The space's change numbers, which stored records name changes by (record-codec.ts). */
    private readonly numbers: ChangeNumbers,
  ) {}

  get size() {
    return this.records.size
  }
  get bytes() {
    return this.totalBytes
  }
  /** Whether misses for `tree` are known absences (see cachedTrees). */
  holdsWholeTree(tree: string) {
    return this.cachedTrees.has(tree)
  }

  /** A tree this replica created or received whole: all its records pass through the cache. */
  treeCreated(tree: string) {
    this.cachedTrees.add(tree)
  }

  /**
   * The storage key of a record, one string per record while it is cached: a key built anew
   * per op is a cons string V8 flattens and hashes on every Map lookup, about 0.5 µs an op.
   */
  keyIn(tree: string, prefix: string, ds: string, id: string): string {
    let keys = this.recordKeys.get(tree)
    if (!keys) {
      keys = new Map()
      this.recordKeys.set(tree, keys)
    }
    const local = esc(ds) + '/' + esc(id)
    let k = keys.get(local)
    if (k === undefined) keys.set(local, (k = prefix + local))
    return k
  }

  /** True when the record under `k` of `tree` must be read from storage before it merges. */
  needsRead(k: string, tree: string): boolean {
    return !this.records.has(k) && !this.cachedTrees.has(tree)
  }

  /** The cached state of a record (undefined when absent or not cached). */
  peek(k: string): StoredRecord | undefined {
    return this.records.get(k) ?? undefined
  }

  /** Sets a record's state within the batch being built (it is dirty until flushed). */
  set(k: string, st: StoredRecord) {
    this.records.set(k, st)
  }

  /** Caches the stored state of records not cached yet (absent ones stay uncached). */
  async readMany(keys: string[]) {
    const vals = await this.storage.getMany(STORES.records, keys)
    const parsed: Array<ParsedRecord | undefined> = vals.map((raw) => (raw ? parseStored(raw, true) : undefined))
    const nums = await this.resolve(parsed)
    for (let i = 0; i < keys.length; i++) {
      const p = parsed[i]
      if (p && !this.records.has(keys[i])) this.cache(keys[i], wholeRecord(p, nums), vals[i]!.byteLength)
    }
  }

  /**
   * A record's state, from the cache or storage. Callable outside the serial queue: what it
   * reads is cached only if nothing cached the record meanwhile (a batch's newer state must
   * never be replaced by an older read) and only while the cache has room (trimming is the
   * queue's job).
   */
  async load(key: string): Promise<StoredRecord | undefined> {
    if (this.records.has(key)) return this.records.get(key) ?? undefined
    const raw = await this.storage.get(STORES.records, key)
    if (this.records.has(key)) return this.records.get(key) ?? undefined
    if (!raw) return undefined
    const p = parseStored(raw, true)
    const nums = await this.resolve([p])
    if (this.records.has(key)) return this.records.get(key) ?? undefined
    const st = wholeRecord(p, nums)
    if (this.records.size < this.max.count && this.totalBytes + raw.byteLength <= this.max.bytes) this.cache(key, st, raw.byteLength)
    return st
  }

  /**
   * Stored records' heads (no op log parsed), each the cached state where one is cached: reads
   * of values over many records (a space's object rows, a dataset). `stored`: the bytes only,
   * never the cache (the state digest compares what storage holds).
   */
  async heads(keys: readonly string[], raws: ReadonlyArray<Uint8Array | undefined>, stored = false): Promise<Array<StoredHead | undefined>> {
    const cached = (k: string) => (stored ? undefined : this.peek(k))
    const parsed = raws.map((raw, i) => (raw && !cached(keys[i]) ? parseStored(raw, false) : undefined))
    const nums = await this.resolve(parsed)
    return parsed.map((p, i) => cached(keys[i]) ?? (p ? finishStored(p, nums) : undefined))
  }

  /** The ids of every change number the parsed records name (one storage read at most). */
  private resolve(parsed: ReadonlyArray<ParsedRecord | undefined>): Promise<Pick<ChangeNumbering, 'idOf'>> | Pick<ChangeNumbering, 'idOf'> {
    const nums: number[] = []
    for (const p of parsed) if (p) numbersIn(p, nums)
    return nums.length ? this.numbers.fetch(nums) : NO_NUMBERS
  }

  private cache(key: string, st: StoredRecord, bytes: number) {
    this.records.set(key, st)
    this.resize(key, bytes)
  }

  private resize(key: string, bytes: number) {
    this.totalBytes += bytes - (this.sizes.get(key) ?? 0)
    this.sizes.set(key, bytes)
  }

  /**
   * Puts every dirty record (or its deletion) into the batch, with the change numbers their
   * bytes name for the first time; pass what it returns to `committed` once the batch is stored.
   */
  flush(batch: WriteBatch, dirty: Set<string>): NumbersFlushed | undefined {
    for (const k of dirty) {
      const st = this.records.get(k)
      if (st) {
        const value = encodeStoredRecord(st, this.numbers)
        batch.puts.push({ store: STORES.records, key: k, value })
        this.records.delete(k)
        this.records.set(k, st)
        this.resize(k, value.byteLength)
      } else batch.dels.push({ store: STORES.records, key: k })
    }
    return this.numbers.flushInto(batch)
  }

  /** After a commit: the change numbers it stored are stored; absent records lose their null marker. */
  committed(dirty: Set<string>, flushed: NumbersFlushed | undefined) {
    this.numbers.stored(flushed)
    for (const k of dirty) {
      if (this.records.get(k) !== null) continue
      this.records.delete(k)
      this.totalBytes -= this.sizes.get(k) ?? 0
      this.sizes.delete(k)
    }
  }

  /** Evicts the oldest records until the cache is within its bounds. Only between batches. */
  trim() {
    if (this.records.size <= this.max.count && this.totalBytes <= this.max.bytes) return
    for (const k of this.records.keys()) {
      if (this.records.size <= this.max.count && this.totalBytes <= this.max.bytes) break
      this.evict(k)
    }
  }

  private evict(k: string) {
    this.records.delete(k)
    this.totalBytes -= this.sizes.get(k) ?? 0
    this.sizes.delete(k)
    this.evictions++
    const start = this.spaceId.length + 1
    const slash = k.indexOf('/', start)
    const tree = k.slice(start, slash)
    this.cachedTrees.delete(tree)
    const keys = this.recordKeys.get(tree)
    if (keys) {
      keys.delete(k.slice(slash + 1))
      if (keys.size === 0) this.recordKeys.delete(tree)
    }
  }

  /** Every record of `tree` (`stored`: its keys in storage, and any cached) becomes absent in this batch. */
  markTreeDeleted(tree: string, prefix: string, stored: readonly string[], dirty: Set<string>) {
    this.recordKeys.delete(tree)
    for (const k of stored) {
      this.records.set(k, null)
      dirty.add(k)
    }
    for (const k of [...this.records.keys()]) {
      if (k.startsWith(prefix)) {
        this.records.set(k, null)
        dirty.add(k)
      }
    }
  }
}
