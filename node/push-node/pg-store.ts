import pg from 'pg'
import type { PushPlatform } from '../../sync/protocol/push-wire.ts'
import { tokenHash, type ClaimLimits, type ClaimedDelivery, type PushTarget, type QueueStats, type Registration, type RegistrationMeta, type SubscriptionStore } from './store.ts'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS push_registrations (
  id BIGSERIAL PRIMARY KEY,
  space_key TEXT NOT NULL, platform TEXT NOT NULL, token TEXT NOT NULL, token_hash TEXT NOT NULL,
  peer TEXT NOT NULL, topics INTEGER NOT NULL, updated_at BIGINT NOT NULL,
  UNIQUE (space_key, platform, token_hash)
);
CREATE INDEX IF NOT EXISTS push_registrations_token ON push_registrations (platform, token_hash);
CREATE INDEX IF NOT EXISTS push_registrations_peer ON push_registrations (peer);
CREATE INDEX IF NOT EXISTS push_registrations_idle ON push_registrations (updated_at);
CREATE TABLE IF NOT EXISTS push_topics (
  space_key TEXT NOT NULL, topic TEXT NOT NULL, reg BIGINT NOT NULL REFERENCES push_registrations (id) ON DELETE CASCADE,
  PRIMARY KEY (space_key, topic, reg)
);
CREATE INDEX IF NOT EXISTS push_topics_reg ON push_topics (reg);
CREATE TABLE IF NOT EXISTS push_messages (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS push_queue (
  id BIGSERIAL PRIMARY KEY, message BIGINT NOT NULL REFERENCES push_messages (id),
  platform TEXT NOT NULL, token TEXT NOT NULL, token_hash TEXT NOT NULL,
  attempts INTEGER NOT NULL, due_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS push_queue_due ON push_queue (due_at);
CREATE INDEX IF NOT EXISTS push_queue_token ON push_queue (platform, token_hash);
CREATE INDEX IF NOT EXISTS push_queue_message ON push_queue (message);
`

/** The first schema's rows (one per topic, the token in each) move into registrations and topics. */
const MIGRATE_FIRST_SCHEMA = `
DO $$ BEGIN
  IF to_regclass('push_subscriptions') IS NOT NULL THEN
    INSERT INTO push_registrations (space_key, platform, token, token_hash, peer, topics, updated_at)
      SELECT space_key, platform, token, encode(sha256(convert_to(token, 'UTF8')), 'hex'), '', COUNT(*), (extract(epoch FROM now()) * 1000)::bigint
      FROM push_subscriptions GROUP BY space_key, platform, token
      ON CONFLICT DO NOTHING;
    INSERT INTO push_topics (space_key, topic, reg)
      SELECT s.space_key, s.topic, r.id FROM push_subscriptions s JOIN push_registrations r
        ON r.space_key = s.space_key AND r.platform = s.platform AND r.token_hash = encode(sha256(convert_to(s.token, 'UTF8')), 'hex')
      ON CONFLICT DO NOTHING;
    DROP TABLE push_subscriptions;
  END IF;
END $$;
`

/**
 * The shared store: several push-node processes behind one address use one PostgreSQL database,
 * so whichever process took a subscription, every process forwards to it, and they share one
 * delivery queue (a claim is `FOR UPDATE SKIP LOCKED`: two processes never take one delivery).
 * `pg` is the maintained pure-JS client; a small pool per process.
 */
export class PgSubscriptionStore implements SubscriptionStore {
  readonly kind = 'postgres'
  private constructor(private readonly pool: pg.Pool) {}

  static async open(connectionString: string): Promise<PgSubscriptionStore> {
    const pool = new pg.Pool({ connectionString, max: 4 })
    // Two processes starting at once both run the DDL: one waits for the other's lock.
    const c = await pool.connect()
    try {
      await c.query('SELECT pg_advisory_lock(7301)')
      try {
        await c.query(SCHEMA)
        await c.query(MIGRATE_FIRST_SCHEMA)
      } finally {
        await c.query('SELECT pg_advisory_unlock(7301)')
      }
    } finally {
      c.release()
    }
    return new PgSubscriptionStore(pool)
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

  async setTopics(spaceKey: string, t: PushTarget, topics: readonly string[], meta: RegistrationMeta = {}): Promise<void> {
    const unique = [...new Set(topics)]
    const hash = tokenHash(t.token)
    await this.tx(async (c) => {
      if (unique.length === 0) {
        await c.query('DELETE FROM push_registrations WHERE space_key = $1 AND platform = $2 AND token_hash = $3', [spaceKey, t.platform, hash])
        return
      }
      const r = await c.query<{ id: string }>(
        `INSERT INTO push_registrations (space_key, platform, token, token_hash, peer, topics, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (space_key, platform, token_hash) DO UPDATE SET peer = EXCLUDED.peer, topics = EXCLUDED.topics, updated_at = EXCLUDED.updated_at
         RETURNING id`,
        [spaceKey, t.platform, t.token, hash, meta.peer ?? '', unique.length, meta.at ?? Date.now()],
      )
      const id = r.rows[0].id
      await c.query('DELETE FROM push_topics WHERE reg = $1', [id])
      await c.query('INSERT INTO push_topics (space_key, topic, reg) SELECT $1, unnest($2::text[]), $3', [spaceKey, unique, id])
    })
  }

  async removeToken(t: PushTarget): Promise<number> {
    const hash = tokenHash(t.token)
    return this.tx(async (c) => {
      const r = await c.query<{ n: string }>(
        'WITH gone AS (DELETE FROM push_registrations WHERE platform = $1 AND token_hash = $2 RETURNING topics) SELECT COALESCE(SUM(topics), 0) AS n FROM gone',
        [t.platform, hash],
      )
      const jobs = await c.query<{ message: string }>('DELETE FROM push_queue WHERE platform = $1 AND token_hash = $2 RETURNING message', [t.platform, hash])
      await this.dropOrphans(
        c,
        jobs.rows.map((j) => j.message),
      )
      return Number(r.rows[0].n)
    })
  }

  private async dropOrphans(c: pg.PoolClient, messages: string[]) {
    if (messages.length === 0) return
    await c.query('DELETE FROM push_messages m WHERE m.id = ANY($1::bigint[]) AND NOT EXISTS (SELECT 1 FROM push_queue q WHERE q.message = m.id)', [[...new Set(messages)]])
  }

  async targetsFor(spaceKey: string, topics: readonly string[]): Promise<PushTarget[]> {
    if (topics.length === 0) return []
    const r = await this.pool.query<{ platform: PushPlatform; token: string }>(
      `SELECT DISTINCT r.platform, r.token FROM push_topics t JOIN push_registrations r ON r.id = t.reg
       WHERE t.space_key = $1 AND t.topic = ANY($2::text[]) ORDER BY r.platform, r.token`,
      [spaceKey, [...topics]],
    )
    return r.rows.map((x) => ({ platform: x.platform, token: x.token }))
  }

  async topicsOf(spaceKey: string, t: PushTarget): Promise<string[]> {
    const r = await this.pool.query<{ topic: string }>(
      `SELECT t.topic FROM push_registrations r JOIN push_topics t ON t.reg = r.id
       WHERE r.space_key = $1 AND r.platform = $2 AND r.token_hash = $3 ORDER BY t.topic COLLATE "C"`,
      [spaceKey, t.platform, tokenHash(t.token)],
    )
    return r.rows.map((x) => x.topic)
  }

  async registrationOf(spaceKey: string, t: PushTarget): Promise<Registration | undefined> {
    const r = await this.pool.query<{ peer: string; topics: number; updated_at: string }>(
      'SELECT peer, topics, updated_at FROM push_registrations WHERE space_key = $1 AND platform = $2 AND token_hash = $3',
      [spaceKey, t.platform, tokenHash(t.token)],
    )
    const x = r.rows[0]
    return x ? { peer: x.peer, topics: x.topics, updatedAt: Number(x.updated_at) } : undefined
  }

  async tokenCount(spaceKey: string): Promise<number> {
    const r = await this.pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM push_registrations WHERE space_key = $1', [spaceKey])
    return Number(r.rows[0].n)
  }

  async usage(peer: string) {
    const r = await this.pool.query<{ p: string; t: string }>(
      'SELECT COALESCE(SUM(topics) FILTER (WHERE peer = $1), 0) AS p, COALESCE(SUM(topics), 0) AS t FROM push_registrations',
      [peer],
    )
    return { peer: Number(r.rows[0].p), total: Number(r.rows[0].t) }
  }

  async evictIdle(before: number): Promise<number> {
    // Topics go with their registration (ON DELETE CASCADE).
    return (await this.pool.query('DELETE FROM push_registrations WHERE updated_at < $1', [before])).rowCount ?? 0
  }

  async totals() {
    const r = await this.pool.query<{ s: string; k: string }>('SELECT (SELECT COUNT(*) FROM push_topics) AS s, (SELECT COUNT(DISTINCT space_key) FROM push_registrations) AS k')
    return { subscriptions: Number(r.rows[0].s), spaceKeys: Number(r.rows[0].k) }
  }

  async enqueue(
    message: string,
    targets: readonly PushTarget[],
    now: number,
    maxDepth: number,
    claim?: { limits: ClaimLimits; leaseUntil: number },
  ): Promise<{ queued: number; claimed: ClaimedDelivery[] }> {
    if (targets.length === 0) return { queued: 0, claimed: [] }
    return this.tx(async (c) => {
      const depth = Number((await c.query<{ n: string }>('SELECT COUNT(*) AS n FROM push_queue')).rows[0].n)
      if (depth + targets.length > maxDepth) return { queued: 0, claimed: [] }
      const m = (await c.query<{ id: string }>('INSERT INTO push_messages (body) VALUES ($1) RETURNING id', [message])).rows[0].id
      const left: ClaimLimits = { ...claim?.limits }
      const takenAt = targets.map((t) => {
        if (claim === undefined || (left[t.platform] ?? 0) <= 0) return false
        left[t.platform]!--
        return true
      })
      const taken = (i: number) => takenAt[i]
      const r = await c.query<{ id: string; platform: string; token_hash: string }>(
        `INSERT INTO push_queue (message, platform, token, token_hash, attempts, due_at)
         SELECT $1, p, t, h, a, d FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[]) AS x (p, t, h, a, d)
         RETURNING id, platform, token_hash`,
        [
          m,
          targets.map((t) => t.platform),
          targets.map((t) => t.token),
          targets.map((t) => tokenHash(t.token)),
          targets.map((_, i) => (taken(i) ? 1 : 0)),
          targets.map((_, i) => (taken(i) ? claim!.leaseUntil : now)),
        ],
      )
      // A send's targets are distinct, so (platform, token) names each row.
      const idOf = new Map(r.rows.map((x) => [`${x.platform}\n${x.token_hash}`, Number(x.id)]))
      const claimed: ClaimedDelivery[] = []
      for (const [i, t] of targets.entries()) if (taken(i)) claimed.push({ id: idOf.get(`${t.platform}\n${tokenHash(t.token)}`)!, target: t, message, attempts: 1 })
      return { queued: targets.length, claimed }
    })
  }

  async claimDue(now: number, limit: number, leaseUntil: number, platform?: PushPlatform): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return []
    const r = await this.pool.query<{ id: string; platform: PushPlatform; token: string; attempts: number; body: string }>(
      `WITH due AS (SELECT id FROM push_queue WHERE due_at <= $1 AND ($4::text IS NULL OR platform = $4) ORDER BY due_at, id LIMIT $2 FOR UPDATE SKIP LOCKED),
       claimed AS (UPDATE push_queue q SET attempts = q.attempts + 1, due_at = $3 FROM due WHERE q.id = due.id RETURNING q.id, q.message, q.platform, q.token, q.attempts)
       SELECT c.id, c.platform, c.token, c.attempts, m.body FROM claimed c JOIN push_messages m ON m.id = c.message ORDER BY c.id`,
      [now, limit, leaseUntil, platform ?? null],
    )
    return r.rows.map((x) => ({ id: Number(x.id), target: { platform: x.platform, token: x.token }, message: x.body, attempts: x.attempts }))
  }

  async finish(id: number): Promise<void> {
    await this.tx(async (c) => {
      const r = await c.query<{ message: string }>('DELETE FROM push_queue WHERE id = $1 RETURNING message', [id])
      await this.dropOrphans(
        c,
        r.rows.map((x) => x.message),
      )
    })
  }

  async retryAt(id: number, dueAt: number): Promise<void> {
    await this.pool.query('UPDATE push_queue SET due_at = $2 WHERE id = $1', [id, dueAt])
  }

  async nextDueAt(): Promise<number | undefined> {
    const t = (await this.pool.query<{ t: string | null }>('SELECT MIN(due_at) AS t FROM push_queue')).rows[0].t
    return t === null ? undefined : Number(t)
  }

  async queueStats(now: number): Promise<QueueStats> {
    const r = await this.pool.query<{ depth: string; due: string }>('SELECT COUNT(*) AS depth, COUNT(*) FILTER (WHERE due_at <= $1) AS due FROM push_queue', [now])
    return { depth: Number(r.rows[0].depth), due: Number(r.rows[0].due) }
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}
