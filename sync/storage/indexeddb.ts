import { promisifyRequest } from 'idb-keyval'
import type { ScanOptions, StorageAdapter, WriteBatch } from './adapter.ts'
import { checkBatch, checkScanOptions, prefixSuccessorUtf16, scanLimit } from './scan.ts'

/** The one object store; records are keyed by the array key [store, key]. */
const OBJECT_STORE = 'kv'
const DB_VERSION = 1

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
}

/**
 * StorageAdapter on IndexedDB: one database with one object store holding every named store,
 * keyed by [store, key] so a store is one contiguous key range and a batch touching several
 * stores is still one transaction.
 *
 * Key order caveat: IndexedDB compares strings by UTF-16 code unit, the spec by UTF-8 byte.
 * The two orders agree except that characters outside the BMP (stored as surrogate pairs)
 * sort below U+E000..U+FFFF here and above them in UTF-8. svc only writes keys whose order is
 * the same in both (base58/ASCII ids, ASCII separators); prefix filtering is exact either way.
 *
 * The database is opened like idb-keyval's `createStore` (lazily, reopened when the browser
 * closes it), but with an injectable factory, an explicit close and a durability option, which
 * `createStore` does not offer. A commit is one readwrite transaction holding every put and
 * delete of the batch and resolves on the transaction's `complete` event.
 */
export class IndexedDbStorageAdapter implements StorageAdapter {
  readonly name = 'indexeddb'
  readonly dbName: string
  private readonly factory: IDBFactory
  private readonly keyRange: typeof IDBKeyRange
  private readonly durability: IDBTransactionDurability
  /** The open connection, kept so a commit can start its transaction synchronously. */
  private conn: IDBDatabase | undefined
  private opening: Promise<IDBDatabase> | undefined
  private closed = false

  constructor(options: IndexedDbStorageOptions) {
    this.dbName = options.dbName
    this.factory = options.indexedDB ?? globalThis.indexedDB
    this.keyRange = options.IDBKeyRange ?? globalThis.IDBKeyRange
    this.durability = options.durability ?? 'relaxed'
    if (!this.factory || !this.keyRange) throw new Error('IndexedDB is not available')
  }

  async get(store: string, key: string) {
    const os = await this.objectStore('readonly')
    return asBytes(await promisifyRequest(os.get([store, key])))
  }

  async getMany(store: string, keys: readonly string[]) {
    if (keys.length === 0) {
      this.check()
      return []
    }
    const os = await this.objectStore('readonly')
    const values = await Promise.all(keys.map((k) => promisifyRequest(os.get([store, k]))))
    return values.map(asBytes)
  }

  async scan(store: string, options: ScanOptions = {}) {
    checkScanOptions(options)
    const range = this.range(store, options)
    const limit = scanLimit(options)
    const os = await this.objectStore('readonly')
    if (range === undefined || limit === 0) return []
    if (!options.reverse || limit === undefined) {
      // Two bulk reads in one transaction see the same snapshot and come back in key order;
      // far faster than a cursor, which costs an event per record.
      const [keys, values] = await Promise.all([
        promisifyRequest(os.getAllKeys(range, limit)),
        promisifyRequest(os.getAll(range, limit)),
      ])
      const out = keys.map((k, i): [string, Uint8Array] => [(k as [string, string])[1], asBytes(values[i])!])
      return options.reverse ? out.reverse() : out
    }
    // The last `limit` records: walk a cursor backwards.
    const out: Array<[string, Uint8Array]> = []
    const req = os.openCursor(range, 'prev')
    await new Promise<void>((resolve, reject) => {
      req.onerror = () => reject(req.error)
      req.onsuccess = () => {
        const cursor = req.result
        if (!cursor) return resolve()
        out.push([(cursor.key as [string, string])[1], asBytes(cursor.value)!])
        if (limit !== undefined && out.length >= limit) return resolve()
        cursor.continue()
      }
    })
    return out
  }

  async commit(batch: WriteBatch) {
    this.check()
    checkBatch(batch)
    // With the connection open the transaction is created and filled before commit() returns,
    // so commits (and reads issued after them) apply in call order and the caller may reuse
    // its buffers at once. Otherwise snapshot the batch while the database opens.
    let db = this.conn
    if (!db) {
      batch = snapshot(batch)
      db = await this.open()
    }
    const tx = db.transaction(OBJECT_STORE, 'readwrite', { durability: this.durability })
    const done = new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve()
      // A failed request aborts the transaction (its default action); report the cause.
      tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'))
    })
    try {
      const os = tx.objectStore(OBJECT_STORE)
      for (const { store, key, value } of batch.puts) os.put(tight(value), [store, key])
      for (const { store, key } of batch.dels) os.delete([store, key])
    } catch (err) {
      done.catch(() => {})
      try {
        tx.abort()
      } catch {
        // already finished or aborted
      }
      throw err
    }
    return done
  }

  async close() {
    this.closed = true
    const db = this.conn ?? (await this.opening?.catch(() => undefined))
    this.conn = undefined
    this.opening = undefined
    // Pending transactions still complete; the connection closes after them.
    db?.close()
  }

  private async objectStore(mode: IDBTransactionMode): Promise<IDBObjectStore> {
    const db = this.conn ?? (await this.open())
    return db.transaction(OBJECT_STORE, mode).objectStore(OBJECT_STORE)
  }

  /** Key range of `store` filtered by the options, or undefined when it is empty. */
  private range(store: string, o: ScanOptions): IDBKeyRange | undefined {
    // [store, ''] is the smallest key of the store, and [store, []] is above all of them
    // (arrays sort after strings).
    let lower = ''
    let lowerOpen = false
    let upper: string | undefined // exclusive
    if (o.prefix) lower = o.prefix
    if (o.gt !== undefined && o.gt >= lower) {
      lower = o.gt
      lowerOpen = true
    }
    if (o.prefix) upper = prefixSuccessorUtf16(o.prefix)
    if (o.lt !== undefined && (upper === undefined || o.lt < upper)) upper = o.lt
    if (upper !== undefined && lower >= upper) return undefined
    return this.keyRange.bound([store, lower], [store, upper ?? []], lowerOpen, true)
  }

  private open(): Promise<IDBDatabase> {
    this.check()
    if (this.opening) return this.opening
    const req = this.factory.open(this.dbName, DB_VERSION)
    req.onupgradeneeded = () => {
      if (!req.result.objectStoreNames.contains(OBJECT_STORE)) req.result.createObjectStore(OBJECT_STORE)
    }
    const opening = promisifyRequest(req).then(
      (db) => {
        const forget = () => {
          if (this.conn === db) this.conn = undefined
          if (this.opening === opening) this.opening = undefined
        }
        // Another tab upgrading or deleting the database: step aside, reopen on next use.
        db.onversionchange = () => {
          forget()
          db.close()
        }
        // The browser closed the connection (e.g. storage cleared): reopen on next use.
        db.onclose = forget
        if (this.closed) {
          db.close()
          throw closedError()
        }
        if (this.opening === opening) this.conn = db
        return db
      },
      (err) => {
        if (this.opening === opening) this.opening = undefined
        throw err
      },
    )
    this.opening = opening
    return opening
  }

  private check() {
    if (this.closed) throw closedError()
  }
}

const closedError = () => new Error('storage adapter is closed')

function asBytes(v: unknown): Uint8Array | undefined {
  if (v === undefined) return undefined
  if (v instanceof Uint8Array) return v
  throw new Error('IndexedDB record is not a Uint8Array')
}

/**
 * Structured clone copies a view's whole underlying buffer, so a small subarray of a large
 * buffer (or a pooled Node Buffer) would store every byte of it: store exactly the view.
 */
function tight(v: Uint8Array): Uint8Array {
  return v.byteOffset === 0 && v.byteLength === v.buffer.byteLength && v.constructor === Uint8Array &&
    v.buffer instanceof ArrayBuffer
    ? v
    : new Uint8Array(v)
}

function snapshot(batch: WriteBatch): WriteBatch {
  return {
    puts: batch.puts.map(({ store, key, value }) => ({ store, key, value: new Uint8Array(value) })),
    dels: batch.dels.map(({ store, key }) => ({ store, key })),
  }
}
