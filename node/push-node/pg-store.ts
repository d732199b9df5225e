import pg from 'pg'
import type { PushPlatform } from '../../sync/protocol/push-wire.ts'
import type { PushTarget, SubscriptionStore } from './store.ts'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS push_subscriptions (
  space_key TEXT NOT NULL, topic TEXT NOT NULL, platform TEXT NOT NULL, token TEXT NOT NULL,
  PRIMARY KEY (space_key, topic, platform, token)
);
CREATE INDEX IF NOT EXISTS push_subscriptions_token ON push_subscriptions (platform, token);
`

/**
 * The shared store: several push-node processes behind one address use one PostgreSQL database,
 * so whichever process took a subscription, every process forwards to it. `pg` is the
 * maintained pure-JS client; a small pool per process.
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
      await c.query(SCHEMA)
      await c.query('SELECT pg_advisory_unlock(7301)')
    } finally {
      c.release()
    }
    return new PgSubscriptionStore(pool)
  }

  async setTopics(spaceKey: string, t: PushTarget, topics: readonly string[]): Promise<void> {
    const c = await this.pool.connect()
    try {
      await c.query('BEGIN')
      await c.query('DELETE FROM push_subscriptions WHERE space_key = $1 AND platform = $2 AND token = $3', [spaceKey, t.platform, t.token])
      if (topics.length) {
        await c.query('INSERT INTO push_subscriptions (space_key, topic, platform, token) SELECT $1, unnest($2::text[]), $3, $4 ON CONFLICT DO NOTHING', [spaceKey, [...new Set(topics)], t.platform, t.token])
      }
      await c.query('COMMIT')
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined)
      throw err
    } finally {
      c.release()
    }
  }

  async removeToken(t: PushTarget): Promise<number> {
    return (await this.pool.query('DELETE FROM push_subscriptions WHERE platform = $1 AND token = $2', [t.platform, t.token])).rowCount ?? 0
  }

  async targetsFor(spaceKey: string, topics: readonly string[]): Promise<PushTarget[]> {
    if (topics.length === 0) return []
    const r = await this.pool.query<{ platform: PushPlatform; token: string }>('SELECT DISTINCT platform, token FROM push_subscriptions WHERE space_key = $1 AND topic = ANY($2::text[]) ORDER BY platform, token', [spaceKey, [...topics]])
    return r.rows.map((x) => ({ platform: x.platform, token: x.token }))
  }

  async topicsOf(spaceKey: string, t: PushTarget): Promise<string[]> {
    const r = await this.pool.query<{ topic: string }>('SELECT topic FROM push_subscriptions WHERE space_key = $1 AND platform = $2 AND token = $3 ORDER BY topic COLLATE "C"', [spaceKey, t.platform, t.token])
    return r.rows.map((x) => x.topic)
  }

  async tokenCount(spaceKey: string): Promise<number> {
    const r = await this.pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM (SELECT DISTINCT platform, token FROM push_subscriptions WHERE space_key = $1) t', [spaceKey])
    return Number(r.rows[0].n)
  }

  async totals() {
    const r = await this.pool.query<{ s: string; k: string }>('SELECT COUNT(*) AS s, COUNT(DISTINCT space_key) AS k FROM push_subscriptions')
    return { subscriptions: Number(r.rows[0].s), spaceKeys: Number(r.rows[0].k) }
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}
