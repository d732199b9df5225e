import Database from 'better-sqlite3'
import type { PushTarget, SubscriptionStore } from './store.ts'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS push_subscriptions (
  space_key TEXT NOT NULL, topic TEXT NOT NULL, platform TEXT NOT NULL, token TEXT NOT NULL,
  PRIMARY KEY (space_key, topic, platform, token)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS push_subscriptions_token ON push_subscriptions (platform, token);
`

/** The embedded store: one SQLite file (WAL), or `:memory:`. */
export class SqliteSubscriptionStore implements SubscriptionStore {
  readonly kind = 'sqlite'
  private readonly db: Database.Database
  // Prepared once: a send looks its targets up on every forward.
  private readonly targetsStmt: Database.Statement
  private readonly topicsStmt: Database.Statement

  constructor(path = ':memory:') {
    this.db = new Database(path)
    this.db.pragma('journal_mode = WAL')
    this.db.exec(SCHEMA)
    this.targetsStmt = this.db.prepare(`SELECT DISTINCT platform, token FROM push_subscriptions WHERE space_key = ? AND topic IN (SELECT value FROM json_each(?)) ORDER BY platform, token`)
    this.topicsStmt = this.db.prepare('SELECT topic FROM push_subscriptions WHERE space_key = ? AND platform = ? AND token = ? ORDER BY topic')
  }

  async setTopics(spaceKey: string, t: PushTarget, topics: readonly string[]): Promise<void> {
    const del = this.db.prepare('DELETE FROM push_subscriptions WHERE space_key = ? AND platform = ? AND token = ?')
    const ins = this.db.prepare('INSERT OR IGNORE INTO push_subscriptions (space_key, topic, platform, token) VALUES (?, ?, ?, ?)')
    this.db.transaction(() => {
      del.run(spaceKey, t.platform, t.token)
      for (const topic of topics) ins.run(spaceKey, topic, t.platform, t.token)
    })()
  }

  async removeToken(t: PushTarget): Promise<number> {
    return this.db.prepare('DELETE FROM push_subscriptions WHERE platform = ? AND token = ?').run(t.platform, t.token).changes
  }

  async targetsFor(spaceKey: string, topics: readonly string[]): Promise<PushTarget[]> {
    if (topics.length === 0) return []
    const rows = this.targetsStmt.all(spaceKey, JSON.stringify(topics)) as PushTarget[]
    return rows.map((r) => ({ platform: r.platform, token: r.token }))
  }

  async topicsOf(spaceKey: string, t: PushTarget): Promise<string[]> {
    const rows = this.topicsStmt.all(spaceKey, t.platform, t.token) as Array<{ topic: string }>
    return rows.map((r) => r.topic)
  }

  async tokenCount(spaceKey: string): Promise<number> {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM (SELECT DISTINCT platform, token FROM push_subscriptions WHERE space_key = ?)').get(spaceKey) as { n: number }).n
  }

  async totals() {
    const r = this.db.prepare('SELECT COUNT(*) AS s, COUNT(DISTINCT space_key) AS k FROM push_subscriptions').get() as { s: number; k: number }
    return { subscriptions: r.s, spaceKeys: r.k }
  }

  async close(): Promise<void> {
    this.db.close()
  }
}
