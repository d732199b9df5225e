import { promisifyRequest } from 'idb-keyval'
import type { ScanOptions, StorageAdapter, WriteBatch } from './adapter.ts'
import { decodeBatch, encodeBatch } from './indexeddb-log.ts'
import { MemoryStorageAdapter } from './memory.ts'
import { errField, silentLogger, type Logger } from '../core/log.ts'
import { checkBatch, checkScanOptions } from './scan.ts'

/** Commit records, keyed by an increasing sequence number; replayed in order at open. */
const LOG = 'log'
/** The first layout (one record per key, keyed [store, key]): read at open, migrated away. */
const LEGACY = 'kv'
/** A snapshot written by compaction is cut into records of about this many bytes. */
const SNAPSHOT_CHUNK_BYTES = 1 << 20
/**
 * Compact once the log's bytes beyond the live data (overwritten and deleted values, record
 * headers) exceed both this and the live data: the database stays under about twice its data,
 * rewrites stay linear in the bytes written, and an append-only ingest never compacts...
 */
const COMPACT_MIN_WASTE_BYTES = 4 << 20
/**
 * ...or once the log holds this many records since the last snapshot and at least an eighth
 * of its bytes (many small records only slow the replay at open).
 */
const COMPACT_RECORDS = 4096
/** Sequence numbers kept free for a snapshot's records (2^20 records of 1 MiB: plenty). */
const SNAPSHOT_SEQ_GAP = 1 << 20

export interface IndexedDbStorageOptions {
  dbName: string
  /** Defaults to the global `indexedDB`; tests pass fake-indexeddb's. */
  indexedDB?: IDBFactory
  /** Defaults to the global `IDBKeyRange`; must come from the same implementation as `indexedDB`. */
  IDBKeyRange?: typeof IDBKeyRange
  /**
   * Durability of write transactions. 'relaxed' (the default) resolves a commit once the
   * browser has handed the data to the OS: it survives a tab or browser crash but an OS crash
   * or power loss may lose the last commits, the same guarantee as the SQLite adapter's
   * WAL + synchronous=NORMAL. 'strict' waits for the data to be flushed to disk.
   */
  durability?: IDBTransactionDurability
  /** Where a failed background compaction is logged (default: nowhere). */
  log?: Logger
}

/**
 * StorageAdapter on IndexedDB, log-structured: a commit is one record (the whole batch,
 * encoded by indexeddb-log.ts) put in one readwrite transaction, resolved on the
 * transaction's `complete` event. Reads are answered from an in-memory copy of the data
 * (MemoryStorageAdapter), loaded at open by replaying the log. Now and then the log is
 * compacted: the whole state is written as a few large records and the older ones deleted,
 * in one transaction.
 *
 * Why: in Chromium each IndexedDB request is a round trip to the browser process's storage
 * backend, so writing a 10k-change backlog as ~20k records took several times as long as
 * verifying it; as ~10 records it takes a few milliseconds. The price is memory: the page
 * holds every value of the database (docs/browser.md).
 *
 * One instance owns the database. Opening bumps the database version, which closes every
 * other connection (another tab, an older instance): an instance whose connection was taken
 * rejects every later call, so two writers never interleave their logs.
 *
 * Key order is the spec's UTF-8 byte order (the memory adapter's), not IndexedDB's.
 */
export class IndexedDbStorageAdapter implements StorageAdapter {
  readonly name = 'indexeddb'
  readonly dbName: string
  private readonly factory: IDBFactory
  private readonly keyRange: typeof IDBKeyRange
  private readonly durability: IDBTransactionDurability
  private readonly mem = new MemoryStorageAdapter()
  /** Bytes (key and value) of every live key by store: the memory adapter does not say. */
  private readonly sizes = new Map<string, Map<string, number>>()
  private liveBytes = 0
  private conn: IDBDatabase | undefined
  private loading: Promise<void> | undefined
  private nextSeq = 1
  private logRecords = 0
  private logBytes = 0
  private snapshotBytes = 0
  private compacting = false
  private closed = false
  /** Set when a write failed or another instance took the database: nothing is served after. */
  private broken: Error | undefined
  private readonly log: Logger

  constructor(options: IndexedDbStorageOptions) {
    this.dbName = options.dbName
    this.factory = options.indexedDB ?? globalThis.indexedDB
    this.keyRange = options.IDBKeyRange ?? globalThis.IDBKeyRange
    this.durability = options.durability ?? 'relaxed'
    this.log = options.log ?? silentLogger
    if (!this.factory || !this.keyRange) throw new Error('IndexedDB is not available')
  }

  async get(store: string, key: string) {
    await this.ready()
    return this.mem.get(store, key)
  }

  async getMany(store: string, keys: readonly string[]) {
    await this.ready()
    return this.mem.getMany(store, keys)
  }

  async scan(store: string, options: ScanOptions = {}) {
    checkScanOptions(options)
    await this.ready()
    return this.mem.scan(store, options)
  }

  async commit(batch: WriteBatch) {
    this.check()
    checkBatch(batch)
    // Encoded now, so the caller may reuse its buffers as soon as commit() returns.
    const record = encodeBatch(batch)
    if (!this.conn) {
      batch = decodeBatch(record)
      await this.ready()
    }
    this.check()
    // Applied to memory in call order, so a read issued after commit() sees it (like a
    // transaction created after another in IndexedDB). If the write fails the adapter breaks.
    this.apply(batch)
    const done = this.write(record)
    if (this.shouldCompact()) void this.compact().catch((err: unknown) => this.compactFailed(err))
    return done
  }

  async close() {
    this.closed = true
    // A failed load was reported to whatever awaited it.
    await this.loading?.catch((err: unknown) => this.log.debug('closing after a failed load', { db: this.dbName, err: errField(err) }))
    // Pending transactions still complete; the connection closes after them.
    this.conn?.close()
    this.conn = undefined
    await this.mem.close()
  }

  private write(record: Uint8Array): Promise<void> {
    const tx = this.conn!.transaction(LOG, 'readwrite', { durability: this.durability })
    tx.objectStore(LOG).put(record, this.nextSeq++)
    this.logRecords++
    this.logBytes += record.length
    return this.completion(tx)
  }

  private completion(tx: IDBTransaction): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve()
      tx.onabort = () => {
        const err = tx.error ?? new Error('IndexedDB transaction aborted')
        this.broken ??= new Error(`IndexedDB write failed, reopen the storage: ${err.message}`)
        reject(err)
      }
    })
  }

  private shouldCompact(): boolean {
    return (
      this.logBytes + this.snapshotBytes - this.liveBytes > Math.max(COMPACT_MIN_WASTE_BYTES, this.liveBytes) ||
      (this.logRecords > COMPACT_RECORDS && this.logBytes * 8 > this.snapshotBytes)
    )
  }

  /**
   * Writes the whole state as records after every existing one and deletes those, in one
   * transaction. The state is taken from memory when this is called (the memory adapter
   * computes a scan's result synchronously), so it is exactly the effect of every commit
   * issued so far, all of whose records have lower sequence numbers; commits issued while it
   * runs get numbers above a gap reserved for the snapshot, so they replay after it.
   */
  private async compact(dropLegacy = false): Promise<void> {
    if (this.compacting || !this.conn) return
    this.compacting = true
    try {
      const scans = [...this.sizes.keys()].map((s) => [s, this.mem.scan(s)] as const)
      const first = this.nextSeq
      this.nextSeq += SNAPSHOT_SEQ_GAP
      this.logRecords = 0
      this.logBytes = 0
      const entries = await Promise.all(scans.map(async ([s, p]) => [s, await p] as const))
      if (!this.conn) return
      const tx = this.conn.transaction(dropLegacy ? [LOG, LEGACY] : [LOG], 'readwrite', { durability: this.durability })
      const done = this.completion(tx)
      const log = tx.objectStore(LOG)
      log.delete(this.keyRange.upperBound(first, true))
      if (dropLegacy) tx.objectStore(LEGACY).clear()
      let seq = first
      let bytes = 0
      let puts: WriteBatch['puts'] = []
      let size = 0
      const flush = () => {
        if (puts.length === 0) return
        const record = encodeBatch({ puts, dels: [] })
        log.put(record, seq++)
        bytes += record.length
        puts = []
        size = 0
      }
      for (const [store, rows] of entries) {
        for (const [key, value] of rows) {
          puts.push({ store, key, value })
          size += key.length + value.length
          if (size >= SNAPSHOT_CHUNK_BYTES) flush()
        }
      }
      flush()
      this.snapshotBytes = bytes
      await done
    } finally {
      this.compacting = false
    }
  }

  private ready(): Promise<void> {
    this.check()
    if (this.conn) return Promise.resolve()
    this.loading ??= this.load()
    return this.loading.then(() => this.check())
  }

  private async load(): Promise<void> {
    const db = await this.takeOver()
    const names = Array.from(db.objectStoreNames)
    const tx = db.transaction(names, 'readonly')
    const log = tx.objectStore(LOG)
    const [seqs, records] = await Promise.all([promisifyRequest(log.getAllKeys()), promisifyRequest(log.getAll())])
    let legacy: { keys: IDBValidKey[]; values: unknown[] } | undefined
    if (names.includes(LEGACY)) {
      const kv = tx.objectStore(LEGACY)
      const [keys, values] = await Promise.all([promisifyRequest(kv.getAllKeys()), promisifyRequest(kv.getAll())])
      if (keys.length > 0) legacy = { keys, values }
    }
    if (legacy) {
      const puts = legacy.keys.map((k, i) => {
        const [store, key] = k as [string, string]
        return { store, key, value: asBytes(legacy.values[i]) }
      })
      this.apply({ puts, dels: [] })
    }
    for (const r of records) {
      const record = asBytes(r)
      this.apply(decodeBatch(record))
      this.snapshotBytes += record.length
    }
    // What is there counts as the snapshot; only the count of records can call for compaction.
    this.logRecords = records.length
    this.nextSeq = seqs.length ? (seqs[seqs.length - 1] as number) + 1 : 1
    if (this.closed) {
      db.close()
      return
    }
    this.conn = db
    if (legacy) await this.compact(true)
    else if (this.shouldCompact()) void this.compact().catch((err: unknown) => this.compactFailed(err))
  }

  /** The log stays as it was (longer, still whole): tried again on a later commit. */
  private compactFailed(err: unknown): void {
    this.log.warn('compacting the IndexedDB write log failed', { db: this.dbName, err: errField(err) })
  }

  private apply(batch: WriteBatch) {
    void this.mem.commit(batch)
    for (const { store, key, value } of batch.puts) {
      let m = this.sizes.get(store)
      if (!m) {
        m = new Map()
        this.sizes.set(store, m)
      }
      this.forget(m.get(key))
      const size = key.length + value.length
      m.set(key, size)
      this.liveBytes += size
    }
    for (const { store, key } of batch.dels) {
      const m = this.sizes.get(store)
      if (!m) continue
      this.forget(m.get(key))
      m.delete(key)
    }
  }

  private forget(size: number | undefined) {
    if (size === undefined) return
    this.liveBytes -= size
  }

  /**
   * Opens the database at a version above the current one, which asks every other connection
   * to close (versionchange): this instance is then the database's only writer.
   */
  private async takeOver(): Promise<IDBDatabase> {
    for (let attempt = 0; ; attempt++) {
      const probe = await promisifyRequest(this.factory.open(this.dbName))
      const version = probe.version
      probe.close()
      const req = this.factory.open(this.dbName, version + 1)
      req.onupgradeneeded = () => {
        if (!req.result.objectStoreNames.contains(LOG)) req.result.createObjectStore(LOG)
      }
      try {
        const db = await promisifyRequest(req)
        db.onversionchange = () => {
          this.broken ??= new Error('IndexedDB storage was opened by another instance (another tab?)')
          this.conn = undefined
          db.close()
        }
        db.onclose = () => {
          this.broken ??= new Error('the browser closed the IndexedDB database')
          this.conn = undefined
        }
        return db
      } catch (err) {
        // Another instance bumped the version between our probe and our open: try again.
        if ((err as DOMException)?.name === 'VersionError' && attempt < 10) continue
        throw err
      }
    }
  }

  private check() {
    if (this.closed) throw new Error('storage adapter is closed')
    if (this.broken) throw this.broken
  }
}

function asBytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v
  throw new Error('IndexedDB record is not a Uint8Array')
}
