import { chmodSync, closeSync, existsSync, openSync } from 'node:fs'
import Database from 'better-sqlite3'
import { silentLogger, type Logger } from '../../../sync/core/log.ts'
import { AppendListeners } from './append-listeners.ts'
import { NotAdmittedError, type AppendListener, type HubChange, type HubStore, type HubTotals, type HubUsage, type SpaceStats, type StoredChange } from './hub-store.ts'

/** The schema this code writes; a database stamped with a later one was made by a newer hub. */
export const SQLITE_HUB_SCHEMA_VERSION = 1

/*
 * hub_changes: seq is the rowid, AUTOINCREMENT so a seq is never given twice even if the last
 * rows were deleted; (space_id, id) is unique (the idempotence), and (space_id, seq) is what
 * changesSince walks. hub_spaces holds per-space counters kept in the transactions that add rows,
 * so stats, usage and totals never scan changes or blocks. Blocks stay in a rowid table: a block
 * may be large, and SQLite keeps large rows out of a WITHOUT ROWID tree's pages poorly.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS hub_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS hub_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  space_id TEXT NOT NULL, id TEXT NOT NULL, tree_id TEXT NOT NULL, raw BLOB NOT NULL,
  UNIQUE (space_id, id)
);
CREATE INDEX IF NOT EXISTS hub_changes_space_seq ON hub_changes (space_id, seq);
CREATE TABLE IF NOT EXISTS hub_spaces (
  space_id TEXT PRIMARY KEY,
  changes INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0, last_seq INTEGER NOT NULL DEFAULT 0,
  blocks INTEGER NOT NULL DEFAULT 0, block_bytes INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hub_blocks (space_id TEXT NOT NULL, id TEXT NOT NULL, bytes BLOB NOT NULL, UNIQUE (space_id, id));
CREATE TABLE IF NOT EXISTS hub_accounts (account TEXT PRIMARY KEY, via TEXT NOT NULL, admitted_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hub_registrations (
  account TEXT NOT NULL, space_id TEXT NOT NULL, registered_at INTEGER NOT NULL,
  PRIMARY KEY (account, space_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS hub_registrations_space ON hub_registrations (space_id, account);
`

export interface SqliteHubStoreOptions {
  /**
   * 'normal' (default): WAL with synchronous=NORMAL, a commit is in the WAL file when
   * appendChanges resolves, so it survives the process dying (SIGKILL included, tested); an OS
   * crash or power cut may roll back the last commits, never corrupt the file. 'full' fsyncs the
   * WAL on every commit, for operators who must not lose an acknowledged change to a power cut.
   */
  synchronous?: 'normal' | 'full'
  /** Mode of the database file and of its -wal and -shm files. Default 0600. */
  mode?: number
  log?: Logger
}

/** Creates the file with `mode` before SQLite does, and tightens the files an older run left. */
function restrictFiles(path: string, mode: number): void {
  if (path === '' || path === ':memory:' || path.startsWith('file:')) return
  closeSync(openSync(path, 'a', mode))
  for (const f of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(f)) chmodSync(f, mode)
}

/** better-sqlite3 answers BLOBs as Buffers; callers get plain Uint8Arrays (a view, no copy) from both stores. */
const bytesOf = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)

function prepare(db: Database.Database) {
  return {
    insChange: db.prepare<[string, string, string, Uint8Array]>('INSERT OR IGNORE INTO hub_changes (space_id, id, tree_id, raw) VALUES (?, ?, ?, ?)'),
    addChanges: db.prepare<[string, number, number, number]>(
      `INSERT INTO hub_spaces (space_id, changes, bytes, last_seq) VALUES (?, ?, ?, ?) ON CONFLICT (space_id) DO UPDATE SET
       changes = changes + excluded.changes, bytes = bytes + excluded.bytes, last_seq = max(last_seq, excluded.last_seq)`,
    ),
    since: db.prepare<[string, number, number], { seq: number; id: string; treeId: string; raw: Buffer }>(
      'SELECT seq, id, tree_id AS treeId, raw FROM hub_changes WHERE space_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    stats: db.prepare<[string], SpaceStats>('SELECT changes, bytes, last_seq AS lastSeq FROM hub_spaces WHERE space_id = ?'),
    insBlock: db.prepare<[string, string, Uint8Array]>('INSERT OR IGNORE INTO hub_blocks (space_id, id, bytes) VALUES (?, ?, ?)'),
    addBlock: db.prepare<[string, number]>(
      `INSERT INTO hub_spaces (space_id, blocks, block_bytes) VALUES (?, 1, ?) ON CONFLICT (space_id) DO UPDATE SET
       blocks = blocks + 1, block_bytes = block_bytes + excluded.block_bytes`,
    ),
    getBlock: db.prepare<[string, string], Buffer>('SELECT bytes FROM hub_blocks WHERE space_id = ? AND id = ?').pluck(),
    hasBlock: db.prepare<[string, string], number>('SELECT 1 FROM hub_blocks WHERE space_id = ? AND id = ?').pluck(),
    admit: db.prepare<[string, string, number]>(
      'INSERT INTO hub_accounts (account, via, admitted_at) VALUES (?, ?, ?) ON CONFLICT (account) DO UPDATE SET via = excluded.via, admitted_at = excluded.admitted_at',
    ),
    admitted: db.prepare<[string], number>('SELECT 1 FROM hub_accounts WHERE account = ?').pluck(),
    delAccount: db.prepare<[string]>('DELETE FROM hub_accounts WHERE account = ?'),
    delRegistrations: db.prepare<[string]>('DELETE FROM hub_registrations WHERE account = ?'),
    register: db.prepare<[string, string, number]>('INSERT OR IGNORE INTO hub_registrations (account, space_id, registered_at) VALUES (?, ?, ?)'),
    unregister: db.prepare<[string, string]>('DELETE FROM hub_registrations WHERE account = ? AND space_id = ?'),
    registrations: db.prepare<[string], string>('SELECT space_id FROM hub_registrations WHERE account = ? ORDER BY space_id').pluck(),
    registrants: db.prepare<[string], string>('SELECT account FROM hub_registrations WHERE space_id = ? ORDER BY account').pluck(),
    kept: db.prepare<[], string>('SELECT DISTINCT space_id FROM hub_registrations ORDER BY space_id').pluck(),
    usage: db.prepare<[string], HubUsage>(
      `SELECT COUNT(*) AS spaces, COALESCE(SUM(s.bytes + s.block_bytes), 0) AS bytes
       FROM hub_registrations r LEFT JOIN hub_spaces s ON s.space_id = r.space_id WHERE r.account = ?`,
    ),
    totals: db.prepare<[], HubTotals>(
      `SELECT COALESCE(SUM(changes > 0 OR blocks > 0), 0) AS spaces, COALESCE(SUM(changes), 0) AS changes, COALESCE(SUM(bytes), 0) AS bytes,
       COALESCE(SUM(blocks), 0) AS blocks, COALESCE(SUM(block_bytes), 0) AS blockBytes FROM hub_spaces`,
    ),
  }
}

/** Creates the tables of a new file and checks the version of an existing one, in one write transaction. */
function migrate(db: Database.Database): void {
  db.transaction(() => {
    db.exec(SCHEMA)
    const version = db.prepare<[], number>('SELECT version FROM hub_schema').pluck().get()
    if (version === undefined) db.prepare('INSERT INTO hub_schema (version) VALUES (?)').run(SQLITE_HUB_SCHEMA_VERSION)
    else if (version > SQLITE_HUB_SCHEMA_VERSION) throw new Error(`hub database has schema version ${version}; this hub knows up to ${SQLITE_HUB_SCHEMA_VERSION}`)
  }).immediate()
}

/**
 * The hub's embedded store: one SQLite file in WAL mode, for one hub process. Other handles on
 * the same file (another process, a backup tool) see every commit, but onAppend hears this
 * handle's appends only: several hub processes share PostgreSQL instead (pg-hub-store.ts).
 *
 * better-sqlite3 is synchronous, so a call holds the event loop for its transaction: an append of
 * 2,000 changes of 300 bytes takes a few milliseconds (docs/hub-store.md has the figures).
 * Callers pass a backlog in batches of a few thousand, as devices send it.
 */
export class SqliteHubStore implements HubStore {
  readonly name = 'sqlite'
  private readonly db: Database.Database
  private readonly s: ReturnType<typeof prepare>
  private readonly listeners: AppendListeners
  private readonly appendTx: (spaceId: string, changes: readonly HubChange[]) => { added: number; lastSeq: number }

  constructor(
    readonly path: string,
    options: SqliteHubStoreOptions = {},
  ) {
    restrictFiles(path, options.mode ?? 0o600)
    this.db = new Database(path)
    try {
      this.db.pragma('journal_mode = WAL')
      this.db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
      // Another handle's write transaction: wait for it rather than fail at once.
      this.db.pragma('busy_timeout = 5000')
      migrate(this.db)
      this.s = prepare(this.db)
    } catch (err) {
      this.db.close()
      throw err
    }
    this.listeners = new AppendListeners((options.log ?? silentLogger).child('hub-store'))
    const tx = this.db.transaction((spaceId: string, changes: readonly HubChange[]) => {
      let added = 0
      let bytes = 0
      let lastSeq = 0
      for (const c of changes) {
        const r = this.s.insChange.run(spaceId, c.id, c.treeId, c.raw)
        if (r.changes === 0) continue
        added++
        bytes += c.raw.byteLength
        lastSeq = Number(r.lastInsertRowid)
      }
      if (added > 0) this.s.addChanges.run(spaceId, added, bytes, lastSeq)
      return { added, lastSeq }
    })
    // IMMEDIATE: the write lock is taken up front, so two handles never both read then fail to upgrade.
    this.appendTx = (spaceId, changes) => tx.immediate(spaceId, changes)
  }

  async appendChanges(spaceId: string, changes: readonly HubChange[]): Promise<number> {
    if (changes.length === 0) return 0
    const { added, lastSeq } = this.appendTx(spaceId, changes)
    if (added > 0) this.listeners.emit(spaceId, lastSeq, true)
    return added
  }

  async changesSince(spaceId: string, after: number, limit: number): Promise<StoredChange[]> {
    if (limit <= 0) return []
    return this.s.since.all(spaceId, after, limit).map((r) => ({ seq: r.seq, id: r.id, treeId: r.treeId, raw: bytesOf(r.raw) }))
  }

  async spaceStats(spaceId: string): Promise<SpaceStats> {
    return this.s.stats.get(spaceId) ?? { changes: 0, bytes: 0, lastSeq: 0 }
  }

  async putBlock(spaceId: string, id: string, bytes: Uint8Array): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (this.s.insBlock.run(spaceId, id, bytes).changes === 0) return false
        this.s.addBlock.run(spaceId, bytes.byteLength)
        return true
      })
      .immediate()
  }

  async getBlock(spaceId: string, id: string): Promise<Uint8Array | undefined> {
    const b = this.s.getBlock.get(spaceId, id)
    return b === undefined ? undefined : bytesOf(b)
  }

  async hasBlocks(spaceId: string, ids: readonly string[]): Promise<boolean[]> {
    return ids.map((id) => this.s.hasBlock.get(spaceId, id) !== undefined)
  }

  async admit(account: string, via: 'config' | 'token', at: number): Promise<void> {
    this.s.admit.run(account, via, at)
  }

  async admitted(account: string): Promise<boolean> {
    return this.s.admitted.get(account) !== undefined
  }

  async revoke(account: string): Promise<void> {
    this.db
      .transaction(() => {
        this.s.delRegistrations.run(account)
        this.s.delAccount.run(account)
      })
      .immediate()
  }

  async register(account: string, spaceId: string, at: number): Promise<void> {
    this.db
      .transaction(() => {
        if (this.s.admitted.get(account) === undefined) throw new NotAdmittedError(account)
        this.s.register.run(account, spaceId, at)
      })
      .immediate()
  }

  async unregister(account: string, spaceId: string): Promise<void> {
    this.s.unregister.run(account, spaceId)
  }

  async registrations(account: string): Promise<string[]> {
    return this.s.registrations.all(account)
  }

  async registrants(spaceId: string): Promise<string[]> {
    return this.s.registrants.all(spaceId)
  }

  async keptSpaces(): Promise<string[]> {
    return this.s.kept.all()
  }

  async usage(account: string): Promise<HubUsage> {
    return this.s.usage.get(account)!
  }

  async totals(): Promise<HubTotals> {
    return this.s.totals.get()!
  }

  onAppend(listener: AppendListener): () => void {
    return this.listeners.add(listener)
  }

  async close(): Promise<void> {
    this.listeners.clear()
    if (this.db.open) this.db.close()
  }
}
