import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { errField, silentLogger, type Logger } from '../../../sync/core/log.ts'
import { AppendListeners } from './append-listeners.ts'
import { NotAdmittedError, type AppendListener, type HubChange, type HubStore, type HubTotals, type HubUsage, type SpaceStats, type StoredChange } from './hub-store.ts'
import { HUB_APPEND_CHANNEL, noticePayload, PgAppendChannel, type RetryBackoff } from './pg-append-channel.ts'

export const PG_HUB_SCHEMA_VERSION = 1
/** Held while a process creates or checks the schema, so two processes starting at once do it one after the other. */
const SCHEMA_LOCK = 7302

/*
 * Ids are COLLATE "C": sorted by their bytes as in SQLite, whatever the database's locale, and
 * their indexes serve the sorted listings. hub_changes is keyed by (space_id, seq), what
 * changesSince walks; seq is one identity for all spaces. hub_spaces holds per-space counters,
 * and its row is also the lock that orders a space's appends (see appendChanges). Changes and
 * blocks are ciphertext: STORAGE EXTERNAL spares PostgreSQL trying to compress them.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS hub_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS hub_changes (
  space_id TEXT COLLATE "C" NOT NULL,
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  id TEXT COLLATE "C" NOT NULL, tree_id TEXT NOT NULL, raw BYTEA NOT NULL,
  PRIMARY KEY (space_id, seq),
  UNIQUE (space_id, id)
);
ALTER TABLE hub_changes ALTER COLUMN raw SET STORAGE EXTERNAL;
CREATE TABLE IF NOT EXISTS hub_spaces (
  space_id TEXT COLLATE "C" PRIMARY KEY,
  changes BIGINT NOT NULL DEFAULT 0, bytes BIGINT NOT NULL DEFAULT 0, last_seq BIGINT NOT NULL DEFAULT 0,
  blocks BIGINT NOT NULL DEFAULT 0, block_bytes BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS hub_blocks (
  space_id TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, bytes BYTEA NOT NULL,
  PRIMARY KEY (space_id, id)
);
ALTER TABLE hub_blocks ALTER COLUMN bytes SET STORAGE EXTERNAL;
CREATE TABLE IF NOT EXISTS hub_accounts (account TEXT COLLATE "C" PRIMARY KEY, via TEXT NOT NULL, admitted_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS hub_registrations (
  account TEXT COLLATE "C" NOT NULL REFERENCES hub_accounts (account) ON DELETE CASCADE,
  space_id TEXT COLLATE "C" NOT NULL, registered_at BIGINT NOT NULL,
  PRIMARY KEY (account, space_id)
);
CREATE INDEX IF NOT EXISTS hub_registrations_space ON hub_registrations (space_id, account);
`

/*
 * One statement adds the changes new to the space, in the order given (seq follows it), and
 * bumps the space's counters by what was added; it answers how many and the space's last seq.
 */
const APPEND = `
WITH ins AS (
  INSERT INTO hub_changes (space_id, id, tree_id, raw)
  SELECT $1, x.id, x.tree_id, x.raw FROM unnest($2::text[], $3::text[], $4::bytea[]) WITH ORDINALITY AS x (id, tree_id, raw, n) ORDER BY x.n
  ON CONFLICT (space_id, id) DO NOTHING
  RETURNING seq, octet_length(raw) AS size
), added AS (SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS bytes, COALESCE(MAX(seq), 0) AS last FROM ins)
UPDATE hub_spaces s SET changes = s.changes + added.n, bytes = s.bytes + added.bytes, last_seq = GREATEST(s.last_seq, added.last)
FROM added WHERE s.space_id = $1
RETURNING added.n, s.last_seq`

const PUT_BLOCK = `
WITH ins AS (INSERT INTO hub_blocks (space_id, id, bytes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING octet_length(bytes) AS size)
INSERT INTO hub_spaces (space_id, blocks, block_bytes) SELECT $1, 1, size FROM ins
ON CONFLICT (space_id) DO UPDATE SET blocks = hub_spaces.blocks + 1, block_bytes = hub_spaces.block_bytes + EXCLUDED.block_bytes`

export interface PgHubStoreOptions {
  /** Connections of the query pool (the LISTEN connection is one more). Default 8. */
  poolSize?: number
  /** The LISTEN connection's reconnect backoff (default 100 ms doubling to 5 s). */
  listenRetry?: RetryBackoff
  log?: Logger
}

/** pg answers bytea as Buffers; callers get plain Uint8Arrays (a view, no copy) from both stores. */
const bytesOf = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)

async function migrate(pool: pg.Pool): Promise<void> {
  const c = await pool.connect()
  try {
    await c.query('SELECT pg_advisory_lock($1)', [SCHEMA_LOCK])
    try {
      await c.query(SCHEMA)
      const v = (await c.query<{ version: number }>('SELECT version FROM hub_schema')).rows[0]?.version
      if (v === undefined) await c.query('INSERT INTO hub_schema (version) VALUES ($1)', [PG_HUB_SCHEMA_VERSION])
      else if (v > PG_HUB_SCHEMA_VERSION) throw new Error(`hub database has schema version ${v}; this hub knows up to ${PG_HUB_SCHEMA_VERSION}`)
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [SCHEMA_LOCK])
    }
  } finally {
    c.release()
  }
}

/**
 * The shared store: any number of hub processes behind one address use one PostgreSQL database,
 * so a device may reach any of them and every process serves every space. A pool for queries,
 * and one dedicated connection per process that LISTENs for the others' appends
 * (pg-append-channel.ts), so a change one process stores reaches devices connected to another
 * within the notification's delay, without polling.
 */
export class PgHubStore implements HubStore {
  readonly name = 'postgres'

  private constructor(
    private readonly pool: pg.Pool,
    /** Names this store in its notices (and its LISTEN connection's application_name). */
    readonly instanceId: string,
    private readonly channel: PgAppendChannel,
    private readonly listeners: AppendListeners,
  ) {}

  static async open(connectionString: string, options: PgHubStoreOptions = {}): Promise<PgHubStore> {
    const log = (options.log ?? silentLogger).child('hub-store')
    const pool = new pg.Pool({ connectionString, max: options.poolSize ?? 8, application_name: 'svc-hub' })
    // An idle pooled connection that drops is replaced on the next query; without a handler it would crash the process.
    pool.on('error', (err) => log.warn('idle database connection dropped', { err: errField(err) }))
    const instanceId = randomBytes(8).toString('hex')
    const listeners = new AppendListeners(log)
    const channel = new PgAppendChannel(
      { connectionString, application_name: `svc-hub listen ${instanceId}`, keepAlive: true },
      instanceId,
      (s, q) => listeners.emit(s, q, false),
      log,
      options.listenRetry,
    )
    try {
      await migrate(pool)
      await channel.start()
    } catch (err) {
      await pool.end()
      throw err
    }
    return new PgHubStore(pool, instanceId, channel, listeners)
  }

  private async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect()
    let broken: Error | undefined
    try {
      await c.query('BEGIN')
      const out = await fn(c)
      await c.query('COMMIT')
      return out
    } catch (err) {
      // The transaction's own error is the one raised; a connection that cannot roll back is discarded.
      await c.query('ROLLBACK').catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e))
      })
      throw err
    } finally {
      c.release(broken)
    }
  }

  /**
   * BEGIN; lock the space's counters row (created if new); insert and count; pg_notify; COMMIT.
   * The lock is what keeps the cursor promise: seqs come from one sequence, taken at insert, and
   * without it a process could take seq 10, another 11 and commit first, and a reader at 11 would
   * never see 10. Holding the space's row from before the insert to the commit makes a space's
   * appends take their seqs in commit order. pg_notify in the transaction is sent on commit only.
   */
  async appendChanges(spaceId: string, changes: readonly HubChange[]): Promise<number> {
    if (changes.length === 0) return 0
    const { added, lastSeq } = await this.tx(async (c) => {
      await c.query('INSERT INTO hub_spaces (space_id) VALUES ($1) ON CONFLICT (space_id) DO UPDATE SET last_seq = hub_spaces.last_seq', [spaceId])
      const r = await c.query<{ n: string; last_seq: string }>(APPEND, [spaceId, changes.map((x) => x.id), changes.map((x) => x.treeId), changes.map((x) => x.raw)])
      const out = { added: Number(r.rows[0].n), lastSeq: Number(r.rows[0].last_seq) }
      if (out.added > 0) await c.query('SELECT pg_notify($1, $2)', [HUB_APPEND_CHANNEL, noticePayload(spaceId, out.lastSeq, this.instanceId)])
      return out
    })
    if (added > 0) {
      this.channel.noteLocal(spaceId, lastSeq)
      this.listeners.emit(spaceId, lastSeq, true)
    }
    return added
  }

  async changesSince(spaceId: string, after: number, limit: number): Promise<StoredChange[]> {
    if (limit <= 0) return []
    const r = await this.pool.query<{ seq: string; id: string; tree_id: string; raw: Buffer }>(
      'SELECT seq, id, tree_id, raw FROM hub_changes WHERE space_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [spaceId, after, limit],
    )
    return r.rows.map((x) => ({ seq: Number(x.seq), id: x.id, treeId: x.tree_id, raw: bytesOf(x.raw) }))
  }

  async spaceStats(spaceId: string): Promise<SpaceStats> {
    const x = (await this.pool.query<{ changes: string; bytes: string; last_seq: string }>('SELECT changes, bytes, last_seq FROM hub_spaces WHERE space_id = $1', [spaceId]))
      .rows[0]
    return x ? { changes: Number(x.changes), bytes: Number(x.bytes), lastSeq: Number(x.last_seq) } : { changes: 0, bytes: 0, lastSeq: 0 }
  }

  async putBlock(spaceId: string, id: string, bytes: Uint8Array): Promise<boolean> {
    // One statement: the block and its space's counters go in together, or neither when the block was there.
    return ((await this.pool.query(PUT_BLOCK, [spaceId, id, bytes])).rowCount ?? 0) > 0
  }

  async getBlock(spaceId: string, id: string): Promise<Uint8Array | undefined> {
    const x = (await this.pool.query<{ bytes: Buffer }>('SELECT bytes FROM hub_blocks WHERE space_id = $1 AND id = $2', [spaceId, id])).rows[0]
    return x ? bytesOf(x.bytes) : undefined
  }

  async hasBlocks(spaceId: string, ids: readonly string[]): Promise<boolean[]> {
    if (ids.length === 0) return []
    const r = await this.pool.query<{ id: string }>('SELECT id FROM hub_blocks WHERE space_id = $1 AND id = ANY($2::text[])', [spaceId, [...ids]])
    const have = new Set(r.rows.map((x) => x.id))
    return ids.map((id) => have.has(id))
  }

  async admit(account: string, via: 'config' | 'token', at: number): Promise<void> {
    await this.pool.query(
      'INSERT INTO hub_accounts (account, via, admitted_at) VALUES ($1, $2, $3) ON CONFLICT (account) DO UPDATE SET via = EXCLUDED.via, admitted_at = EXCLUDED.admitted_at',
      [account, via, at],
    )
  }

  async admitted(account: string): Promise<boolean> {
    return ((await this.pool.query('SELECT 1 FROM hub_accounts WHERE account = $1', [account])).rowCount ?? 0) > 0
  }

  async revoke(account: string): Promise<void> {
    // Its registrations go with it (ON DELETE CASCADE), in this statement.
    await this.pool.query('DELETE FROM hub_accounts WHERE account = $1', [account])
  }

  async register(account: string, spaceId: string, at: number): Promise<void> {
    // The foreign key checks the admission and locks it until this commits: a revoke racing
    // this insert either comes first (and the insert fails) or waits and then drops it.
    try {
      await this.pool.query('INSERT INTO hub_registrations (account, space_id, registered_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [account, spaceId, at])
    } catch (err) {
      if (err instanceof pg.DatabaseError && err.code === '23503') throw new NotAdmittedError(account)
      throw err
    }
  }

  async unregister(account: string, spaceId: string): Promise<void> {
    await this.pool.query('DELETE FROM hub_registrations WHERE account = $1 AND space_id = $2', [account, spaceId])
  }

  async registrations(account: string): Promise<string[]> {
    const r = await this.pool.query<{ space_id: string }>('SELECT space_id FROM hub_registrations WHERE account = $1 ORDER BY space_id', [account])
    return r.rows.map((x) => x.space_id)
  }

  async registrants(spaceId: string): Promise<string[]> {
    const r = await this.pool.query<{ account: string }>('SELECT account FROM hub_registrations WHERE space_id = $1 ORDER BY account', [spaceId])
    return r.rows.map((x) => x.account)
  }

  async keptSpaces(): Promise<string[]> {
    const r = await this.pool.query<{ space_id: string }>('SELECT DISTINCT space_id FROM hub_registrations ORDER BY space_id')
    return r.rows.map((x) => x.space_id)
  }

  async usage(account: string): Promise<HubUsage> {
    const x = (
      await this.pool.query<{ spaces: string; bytes: string }>(
        `SELECT COUNT(*) AS spaces, COALESCE(SUM(s.bytes + s.block_bytes), 0) AS bytes
         FROM hub_registrations r LEFT JOIN hub_spaces s ON s.space_id = r.space_id WHERE r.account = $1`,
        [account],
      )
    ).rows[0]
    return { spaces: Number(x.spaces), bytes: Number(x.bytes) }
  }

  async totals(): Promise<HubTotals> {
    const x = (
      await this.pool.query<{ spaces: string; changes: string; bytes: string; blocks: string; block_bytes: string }>(
        `SELECT COUNT(*) FILTER (WHERE changes > 0 OR blocks > 0) AS spaces, COALESCE(SUM(changes), 0) AS changes, COALESCE(SUM(bytes), 0) AS bytes,
         COALESCE(SUM(blocks), 0) AS blocks, COALESCE(SUM(block_bytes), 0) AS block_bytes FROM hub_spaces`,
      )
    ).rows[0]
    return { spaces: Number(x.spaces), changes: Number(x.changes), bytes: Number(x.bytes), blocks: Number(x.blocks), blockBytes: Number(x.block_bytes) }
  }

  onAppend(listener: AppendListener): () => void {
    return this.listeners.add(listener)
  }

  private closing: Promise<void> | undefined

  /** Stops listening and ends the pool; closing again waits for the first close. */
  close(): Promise<void> {
    this.listeners.clear()
    this.closing ??= this.channel.stop().finally(() => this.pool.end())
    return this.closing
  }
}
