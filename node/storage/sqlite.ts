import { chmodSync, closeSync, existsSync, openSync } from 'node:fs'
import Database from 'better-sqlite3'
import type { ScanOptions, StorageAdapter, WriteBatch } from '../../sync/storage/adapter.ts'
import { checkBatch, checkScanOptions, prefixSuccessorUtf8, scanLimit } from '../../sync/storage/scan.ts'

export interface SqliteStorageOptions {
  /**
   * 'normal' (default): in WAL mode a commit is durable once it is in the WAL file (written,
   * not fsynced), so it survives the process dying at any point, kill -9 included (tested);
   * only an OS crash or power loss can roll back the last commits, never corrupting the
   * database. That is the guarantee the IndexedDB adapter gives with 'relaxed' durability.
   * 'full' fsyncs the WAL on every commit: big batches barely notice, but small commits pay a
   * whole fsync each (about 8x slower single-put commits on the dev VM's disk, more on real
   * disks), so it is opt-in for servers that must not lose an acknowledged write to a power cut.
   */
  synchronous?: 'normal' | 'full'
  /**
   * Mode of the database file, and so of its -wal and -shm files (SQLite gives those the
   * database file's mode). Default 0600: the files hold the account's data, even if sealed.
   */
  mode?: number
  /**
   * Table layout of a new database (an existing one keeps the layout it was made with):
   * 'split' (default): keys in a small clustered index, values in a rowid table they point to;
   * 'inline': one table clustered on the key, values inline. See `SqliteLayout`.
   */
  layout?: SqliteLayout
}

/**
 * How the key-value pairs sit in SQLite.
 *
 * 'inline' (databases made before the split layout existed): `kv(store, key, value)` WITHOUT ROWID,
 * values inside the key-ordered B-tree. Ids are random, so a commit of a few thousand puts
 * dirties a leaf page per put, and each dirty 4 KiB page is written whole to the WAL (and again
 * at checkpoint): about 16 MB of page writes for 2 MB of values, most of a sync commit's time.
 *
 * 'split': `kv_keys(store, key, id)` WITHOUT ROWID (about 70 bytes a row, so fifty to a page and
 * few pages dirtied) pointing into `kv_values(id INTEGER PRIMARY KEY, value)`, where new values
 * are appended in id order, filling the same few pages. A put of an existing key rewrites its
 * value in place. Commits of 4,000 random puts of 500 bytes: p50 57.7 ms against 122.6 ms inline,
 * point reads and prefix scans about 10% faster (`npm run bench -- --json --only sqliteLayout`).
 */
export type SqliteLayout = 'split' | 'inline'

/** Creates the database file with `mode` before SQLite does, and tightens files an older run left. */
function restrictFiles(path: string, mode: number): void {
  if (path === '' || path === ':memory:' || path.startsWith('file:')) return
  closeSync(openSync(path, 'a', mode))
  for (const f of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) if (existsSync(f)) chmodSync(f, mode)
}

type Row = [key: string, value: Buffer]

/**
 * StorageAdapter on SQLite (better-sqlite3): one WAL-mode database whose keys sit in a WITHOUT
 * ROWID table clustered on (store, key), so a store is one contiguous range of the primary key
 * and scans are index range walks (values beside them or in a table of their own: see
 * `SqliteLayout`). SQLite's BINARY collation compares the UTF-8 bytes, which is exactly the
 * spec's key order.
 */
export class SqliteStorageAdapter implements StorageAdapter {
  readonly name = 'sqlite'
  /** The connection, for features that add their own tables (query indexes). */
  readonly db: Database.Database
  /** The layout of this database's tables (fixed when the file was made). */
  readonly layout: SqliteLayout
  /** What reads select from: a table of (store, key, value) rows in either layout. */
  private readonly pairs: string
  private readonly getStmt: Database.Statement<[string, string], Buffer>
  private readonly scanStmts = new Map<string, Database.Statement<unknown[], Row>>()
  private readonly groupStmts = new Map<number, Database.Statement<string[], [string, Buffer]>>()
  private readonly applyBatch: (batch: WriteBatch) => void

  constructor(path: string, options: SqliteStorageOptions = {}) {
    restrictFiles(path, options.mode ?? 0o600)
    this.db = new Database(path)
    try {
      this.db.pragma('journal_mode = WAL')
      this.db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
      // Checkpoints every WAL_AUTOCHECKPOINT_PAGES instead of SQLite's 1,000: a checkpoint
      // fsyncs twice on the committing thread (the event loop), and a commit of one small write
      // dirties some eight pages, so at 1,000 one commit in about 125 paid it; pages written
      // again between checkpoints (the meta and change-number pages of every commit, the tail
      // of kv_values) are copied once. The WAL is cut back to WAL_SIZE_LIMIT_BYTES once reset.
      this.db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`)
      this.db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`)
      const hasInline = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kv'").get() !== undefined
      const hasSplit = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kv_keys'").get() !== undefined
      this.layout = hasInline ? 'inline' : hasSplit ? 'split' : (options.layout ?? 'split')
      if (this.layout === 'inline') {
        this.db.exec(`CREATE TABLE IF NOT EXISTS kv (
          store TEXT NOT NULL,
          key TEXT NOT NULL,
          value BLOB NOT NULL,
          PRIMARY KEY (store, key)
        ) WITHOUT ROWID`)
      } else {
        this.db.exec(`CREATE TABLE IF NOT EXISTS kv_values (id INTEGER PRIMARY KEY, value BLOB NOT NULL);
          CREATE TABLE IF NOT EXISTS kv_keys (
            store TEXT NOT NULL,
            key TEXT NOT NULL,
            id INTEGER NOT NULL,
            PRIMARY KEY (store, key)
          ) WITHOUT ROWID`)
      }
    } catch (err) {
      this.db.close()
      throw err
    }
    // Only `id` is in both split tables: store, key and value name one column either way.
    this.pairs = this.layout === 'inline' ? 'kv' : 'kv_keys JOIN kv_values USING (id)'
    this.getStmt = this.db.prepare<[string, string], Buffer>(`SELECT value FROM ${this.pairs} WHERE store = ? AND key = ?`).pluck()
    if (this.layout === 'inline') {
      const put = this.db.prepare('INSERT OR REPLACE INTO kv (store, key, value) VALUES (?, ?, ?)')
      const del = this.db.prepare('DELETE FROM kv WHERE store = ? AND key = ?')
      this.applyBatch = this.db.transaction((batch: WriteBatch) => {
        for (const p of batch.puts) put.run(p.store, p.key, p.value)
        for (const d of batch.dels) del.run(d.store, d.key)
      })
    } else {
      const idOf = this.db.prepare<[string, string], number>('SELECT id FROM kv_keys WHERE store = ? AND key = ?').pluck()
      // Two statements a put, new key or not (a lookup, then an append and a key, was three for
      // a new one: most puts of a write are new keys, its changes and new records). A new key
      // takes the id after the last value's, read inside the write transaction, so another
      // connection's writes cannot collide with it; `RETURNING` answers only when it was added.
      const addKey = this.db
        .prepare<[string, string], number>('INSERT OR IGNORE INTO kv_keys (store, key, id) VALUES (?, ?, (SELECT coalesce(max(id), 0) + 1 FROM kv_values)) RETURNING id')
        .pluck()
      const addValue = this.db.prepare('INSERT INTO kv_values (id, value) VALUES (?, ?)')
      const rewriteKey = this.db.prepare('UPDATE kv_values SET value = ? WHERE id = (SELECT id FROM kv_keys WHERE store = ? AND key = ?)')
      const dropValue = this.db.prepare('DELETE FROM kv_values WHERE id = ?')
      const dropKey = this.db.prepare('DELETE FROM kv_keys WHERE store = ? AND key = ?')
      this.applyBatch = this.db.transaction((batch: WriteBatch) => {
        for (const p of batch.puts) {
          const id = addKey.get(p.store, p.key)
          if (id !== undefined) addValue.run(id, p.value)
          else rewriteKey.run(p.value, p.store, p.key)
        }
        for (const d of batch.dels) {
          const id = idOf.get(d.store, d.key)
          if (id === undefined) continue
          dropValue.run(id)
          dropKey.run(d.store, d.key)
        }
      })
    }
  }

  async get(store: string, key: string) {
    this.check()
    return bytes(this.getStmt.get(store, key))
  }

  async getMany(store: string, keys: readonly string[]) {
    this.check()
    // Synchronous, so all reads see the same state without an explicit transaction.
    if (keys.length < GET_MANY_GROUP) return keys.map((k) => bytes(this.getStmt.get(store, k)))
    // A statement per GET_MANY_GROUP keys: a point read per key costs mostly the call into
    // SQLite (opening a 100k-object space reads every row: 1.1-1.6 s one by one, 0.6-0.7 s in
    // groups of 64, measured on its SQLite file).
    const found = new Map<string, Buffer>()
    for (let i = 0; i < keys.length; i += GET_MANY_GROUP) {
      const part = keys.slice(i, i + GET_MANY_GROUP)
      for (const [k, v] of this.getGroupStmt(part.length).all(store, ...part)) found.set(k, v)
    }
    // A key asked twice gets a view of its own (a caller may keep or change what it got).
    const given = new Set<string>()
    return keys.map((k) => {
      const v = found.get(k)
      if (v === undefined) return undefined
      if (given.has(k)) return new Uint8Array(v)
      given.add(k)
      return bytes(v)
    })
  }

  private getGroupStmt(n: number): Database.Statement<string[], [string, Buffer]> {
    let stmt = this.groupStmts.get(n)
    if (!stmt) {
      stmt = this.db.prepare<string[], [string, Buffer]>(`SELECT key, value FROM ${this.pairs} WHERE store = ? AND key IN (${new Array(n).fill('?').join(', ')})`).raw()
      this.groupStmts.set(n, stmt)
    }
    return stmt
  }

  async scan(store: string, options: ScanOptions = {}) {
    this.check()
    checkScanOptions(options)
    const limit = scanLimit(options)
    if (limit === 0) return []
    const where = ['store = ?']
    const params: unknown[] = [store]
    if (options.gt !== undefined) {
      where.push('key > ?')
      params.push(options.gt)
    }
    if (options.lt !== undefined) {
      where.push('key < ?')
      params.push(options.lt)
    }
    if (options.prefix) {
      where.push('key >= ?')
      params.push(options.prefix)
      const end = prefixSuccessorUtf8(options.prefix)
      if (end !== undefined) {
        where.push('key < ?')
        params.push(end)
      }
    }
    let sql = `SELECT key, value FROM ${this.pairs} WHERE ${where.join(' AND ')} ORDER BY key${options.reverse ? ' DESC' : ''}`
    if (limit !== undefined) {
      sql += ' LIMIT ?'
      params.push(limit)
    }
    let stmt = this.scanStmts.get(sql)
    if (!stmt) {
      stmt = this.db.prepare<unknown[], Row>(sql).raw()
      this.scanStmts.set(sql, stmt)
    }
    return stmt.all(...params).map((r): [string, Uint8Array] => [r[0], bytes(r[1])!])
  }

  async commit(batch: WriteBatch) {
    this.check()
    checkBatch(batch)
    this.applyBatch(batch)
  }

  async close() {
    if (this.db.open) this.db.close()
  }

  private check() {
    if (!this.db.open) throw new Error('storage adapter is closed')
  }
}

/** Pages in the WAL before a commit checkpoints it (SQLite's default: 1,000); 40 MiB of 4 KiB pages. */
const WAL_AUTOCHECKPOINT_PAGES = 10_000
/** What the WAL file is truncated to once a checkpoint let it restart. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024

/** better-sqlite3 returns Buffers; hand out plain Uint8Arrays (Buffer#slice does not copy). */
/** Keys read by one statement in getMany (SQLite allows 32,766 parameters). */
const GET_MANY_GROUP = 64

function bytes(b: Buffer | undefined): Uint8Array | undefined {
  return b === undefined ? undefined : new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
}
