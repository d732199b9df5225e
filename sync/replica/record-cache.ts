import { STORES, type StorageAdapter, type WriteBatch } from '../storage/adapter.ts'
import { decodeStoredRecord, encodeStoredRecord, type StoredRecord } from './record-codec.ts'
import { esc } from './storage-keys.ts'

/**
 * The materialized records a replica has read or written, by storage key. `null` marks a
 * record deleted in the batch being built (its storage row is deleted at commit).
 */
export class RecordCache {
  private readonly records = new Map<string, StoredRecord | null>()
  /**
   * Trees created on this replica since it opened: every record they have was written through
   * the cache, which nothing evicts, so a record missing from it does not exist and needs no
   * storage read (an object arriving whole from a peer, the common case in a sync backlog).
   */
  private readonly cachedTrees = new Set<string>()
  /** Per tree: record keys by `<ds>/<id>`, so each record has one key string (see keyIn). */
  private readonly recordKeys = new Map<string, Map<string, string>>()

  constructor(private readonly storage: StorageAdapter) {}

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
    if (!keys) this.recordKeys.set(tree, (keys = new Map()))
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

  set(k: string, st: StoredRecord) {
    this.records.set(k, st)
  }

  /** Caches the stored state of records not cached yet (absent ones stay uncached). */
  async readMany(keys: string[]) {
    const vals = await this.storage.getMany(STORES.records, keys)
    for (let i = 0; i < keys.length; i++) {
      const raw = vals[i]
      if (raw && !this.records.has(keys[i])) this.records.set(keys[i], decodeStoredRecord(raw))
    }
  }

  /** A record's state, from the cache or storage. */
  async load(key: string): Promise<StoredRecord | undefined> {
    if (this.records.has(key)) return this.records.get(key) ?? undefined
    const raw = await this.storage.get(STORES.records, key)
    const st = raw ? decodeStoredRecord(raw) : undefined
    if (st) this.records.set(key, st)
    return st
  }

  /** Puts every dirty record (or its deletion) into the batch. */
  flush(batch: WriteBatch, dirty: Set<string>) {
    for (const k of dirty) {
      const st = this.records.get(k)
      if (st) batch.puts.push({ store: STORES.records, key: k, value: encodeStoredRecord(st) })
      else batch.dels.push({ store: STORES.records, key: k })
    }
  }

  /** After a commit, absent records no longer need their null marker in the cache. */
  forgetDeleted(dirty: Set<string>) {
    for (const k of dirty) if (this.records.get(k) === null) this.records.delete(k)
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
