import Database from 'better-sqlite3'
import type { PushPlatform } from '../../sync/protocol/push-wire.ts'
import { tokenHash, type ClaimLimits, type ClaimedDelivery, type PushTarget, type QueueStats, type Registration, type RegistrationMeta, type SubscriptionStore } from './store.ts'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS push_registrations (
  id INTEGER PRIMARY KEY,
  space_key TEXT NOT NULL, platform TEXT NOT NULL, token TEXT NOT NULL, token_hash TEXT NOT NULL,
  peer TEXT NOT NULL, topics INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  UNIQUE (space_key, platform, token_hash)
);
CREATE INDEX IF NOT EXISTS push_registrations_token ON push_registrations (platform, token_hash);
CREATE INDEX IF NOT EXISTS push_registrations_peer ON push_registrations (peer);
CREATE INDEX IF NOT EXISTS push_registrations_idle ON push_registrations (updated_at);
CREATE TABLE IF NOT EXISTS push_topics (
  space_key TEXT NOT NULL, topic TEXT NOT NULL, reg INTEGER NOT NULL,
  PRIMARY KEY (space_key, topic, reg)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS push_topics_reg ON push_topics (reg);
CREATE TABLE IF NOT EXISTS push_messages (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS push_queue (
  id INTEGER PRIMARY KEY, message INTEGER NOT NULL,
  platform TEXT NOT NULL, token TEXT NOT NULL, token_hash TEXT NOT NULL,
  attempts INTEGER NOT NULL, due_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS push_queue_due ON push_queue (due_at);
CREATE INDEX IF NOT EXISTS push_queue_token ON push_queue (platform, token_hash);
CREATE INDEX IF NOT EXISTS push_queue_message ON push_queue (message);
`

/**
 * The first schema kept one row per (space key, topic, platform, token): a 4 KiB token was stored
 * once per topic and again in its index. Its rows move into the registrations and topics.
 */
function migrateFirstSchema(db: Database.Database, now: number) {
  const old = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'push_subscriptions'`).get()
  if (!old) return
  db.function('svc_token_hash', { deterministic: true }, (t: unknown) => tokenHash(String(t)))
  db.transaction(() => {
    db.prepare(
      `INSERT OR IGNORE INTO push_registrations (space_key, platform, token, token_hash, peer, topics, updated_at)
      SELECT space_key, platform, token, svc_token_hash(token), '', COUNT(*), ? FROM push_subscriptions GROUP BY space_key, platform, token`,
    ).run(now)
    db.exec(`INSERT OR IGNORE INTO push_topics (space_key, topic, reg)
      SELECT s.space_key, s.topic, r.id FROM push_subscriptions s JOIN push_registrations r
        ON r.space_key = s.space_key AND r.platform = s.platform AND r.token_hash = svc_token_hash(s.token);
      DROP TABLE push_subscriptions;`)
  })()
}

/**
 * The embedded store: one SQLite file (WAL), or `:memory:` for tests. Two handles on one file
 * (two processes) share it: writes are transactions, a claim is one UPDATE.
 */
export class SqliteSubscriptionStore implements SubscriptionStore {
  readonly kind = 'sqlite'
  private readonly db: Database.Database
  // Prepared once: a send looks its targets up and queues its deliveries on every forward.
  private readonly s: Record<string, Database.Statement>
  /** Deliveries finished since the last write: one transaction per event-loop turn takes them all. */
  private finished: number[] = []
  private finishing: Promise<void> | undefined

  constructor(readonly path = ':memory:') {
    this.db = new Database(path)
    this.db.pragma('journal_mode = WAL')
    // WAL with NORMAL: a commit survives a crash of the process (not of the machine); a queued
    // push is best effort, and a full fsync per send would cost more than the push is worth.
    this.db.pragma('synchronous = NORMAL')
    this.db.pragma('busy_timeout = 5000')
    this.db.exec(SCHEMA)
    migrateFirstSchema(this.db, Date.now())
    const p = (sql: string) => this.db.prepare(sql)
    this.s = {
      targets: p(`SELECT DISTINCT r.platform, r.token FROM push_topics t JOIN push_registrations r ON r.id = t.reg
        WHERE t.space_key = ? AND t.topic IN (SELECT value FROM json_each(?)) ORDER BY r.platform, r.token`),
      topics: p(`SELECT t.topic FROM push_registrations r JOIN push_topics t ON t.reg = r.id
        WHERE r.space_key = ? AND r.platform = ? AND r.token_hash = ? ORDER BY t.topic`),
      reg: p('SELECT id, peer, topics, updated_at AS updatedAt FROM push_registrations WHERE space_key = ? AND platform = ? AND token_hash = ?'),
      upsertReg: p(`INSERT INTO push_registrations (space_key, platform, token, token_hash, peer, topics, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (space_key, platform, token_hash) DO UPDATE SET peer = excluded.peer, topics = excluded.topics, updated_at = excluded.updated_at
        RETURNING id`),
      delTopics: p('DELETE FROM push_topics WHERE reg = ?'),
      delReg: p('DELETE FROM push_registrations WHERE id = ?'),
      insTopic: p('INSERT OR IGNORE INTO push_topics (space_key, topic, reg) VALUES (?, ?, ?)'),
      regsOfToken: p('SELECT id, topics FROM push_registrations WHERE platform = ? AND token_hash = ?'),
      tokenCount: p('SELECT COUNT(*) AS n FROM push_registrations WHERE space_key = ?'),
      peerUsage: p('SELECT COALESCE(SUM(topics), 0) AS n FROM push_registrations WHERE peer = ?'),
      totalUsage: p('SELECT COALESCE(SUM(topics), 0) AS n FROM push_registrations'),
      idle: p('SELECT id FROM push_registrations WHERE updated_at < ?'),
      depth: p('SELECT COUNT(*) AS n FROM push_queue'),
      insMessage: p('INSERT INTO push_messages (body) VALUES (?)'),
      insJob: p('INSERT INTO push_queue (message, platform, token, token_hash, attempts, due_at) VALUES (?, ?, ?, ?, ?, ?)'),
      due: p('SELECT id FROM push_queue WHERE due_at <= ? ORDER BY due_at, id LIMIT ?'),
      dueOf: p('SELECT id FROM push_queue WHERE due_at <= ? AND platform = ? ORDER BY due_at, id LIMIT ?'),
      claim: p('UPDATE push_queue SET attempts = attempts + 1, due_at = ? WHERE id = ? RETURNING id, message, platform, token, attempts'),
      body: p('SELECT body FROM push_messages WHERE id = ?'),
      delJob: p('DELETE FROM push_queue WHERE id = ?'),
      finishJob: p('DELETE FROM push_queue WHERE id = ? RETURNING message'),
      delOrphan: p('DELETE FROM push_messages WHERE id = ? AND NOT EXISTS (SELECT 1 FROM push_queue WHERE message = ?)'),
      retry: p('UPDATE push_queue SET due_at = ? WHERE id = ?'),
      jobsOfToken: p('SELECT id, message FROM push_queue WHERE platform = ? AND token_hash = ?'),
      nextDue: p('SELECT MIN(due_at) AS t FROM push_queue'),
      stats: p('SELECT COUNT(*) AS depth, COALESCE(SUM(due_at <= ?), 0) AS due FROM push_queue'),
    }
  }

  async setTopics(spaceKey: string, t: PushTarget, topics: readonly string[], meta: RegistrationMeta = {}): Promise<void> {
    const unique = [...new Set(topics)]
    const hash = tokenHash(t.token)
    this.db.transaction(() => {
      const reg = this.s.reg.get(spaceKey, t.platform, hash) as { id: number } | undefined
      if (reg) this.s.delTopics.run(reg.id)
      if (unique.length === 0) {
        if (reg) this.s.delReg.run(reg.id)
        return
      }
      const { id } = this.s.upsertReg.get(spaceKey, t.platform, t.token, hash, meta.peer ?? '', unique.length, meta.at ?? Date.now()) as { id: number }
      for (const topic of unique) this.s.insTopic.run(spaceKey, topic, id)
    })()
  }

  async removeToken(t: PushTarget): Promise<number> {
    const hash = tokenHash(t.token)
    return this.db.transaction(() => {
      let n = 0
      for (const r of this.s.regsOfToken.all(t.platform, hash) as Array<{ id: number; topics: number }>) {
        n += this.s.delTopics.run(r.id).changes
        this.s.delReg.run(r.id)
      }
      for (const j of this.s.jobsOfToken.all(t.platform, hash) as Array<{ id: number; message: number }>) {
        this.s.delJob.run(j.id)
        this.s.delOrphan.run(j.message, j.message)
      }
      return n
    })()
  }

  async targetsFor(spaceKey: string, topics: readonly string[]): Promise<PushTarget[]> {
    if (topics.length === 0) return []
    const rows = this.s.targets.all(spaceKey, JSON.stringify(topics)) as PushTarget[]
    return rows.map((r) => ({ platform: r.platform, token: r.token }))
  }

  async topicsOf(spaceKey: string, t: PushTarget): Promise<string[]> {
    const rows = this.s.topics.all(spaceKey, t.platform, tokenHash(t.token)) as Array<{ topic: string }>
    return rows.map((r) => r.topic)
  }

  async registrationOf(spaceKey: string, t: PushTarget): Promise<Registration | undefined> {
    const r = this.s.reg.get(spaceKey, t.platform, tokenHash(t.token)) as (Registration & { id: number }) | undefined
    return r ? { peer: r.peer, topics: r.topics, updatedAt: r.updatedAt } : undefined
  }

  async tokenCount(spaceKey: string): Promise<number> {
    return (this.s.tokenCount.get(spaceKey) as { n: number }).n
  }

  async usage(peer: string) {
    return { peer: (this.s.peerUsage.get(peer) as { n: number }).n, total: (this.s.totalUsage.get() as { n: number }).n }
  }

  async evictIdle(before: number): Promise<number> {
    return this.db.transaction(() => {
      const ids = this.s.idle.all(before) as Array<{ id: number }>
      for (const { id } of ids) {
        this.s.delTopics.run(id)
        this.s.delReg.run(id)
      }
      return ids.length
    })()
  }

  async totals() {
    const r = this.db.prepare('SELECT (SELECT COUNT(*) FROM push_topics) AS s, (SELECT COUNT(DISTINCT space_key) FROM push_registrations) AS k').get() as { s: number; k: number }
    return { subscriptions: r.s, spaceKeys: r.k }
  }

  /**
   * Sends queued while another send's write is this turn's: like finishes, they share one
   * transaction at the end of the turn. The first send of a turn is written at once, so a lone
   * send (the common case) waits for no turn.
   */
  private enqueues: Array<{
    message: string
    targets: readonly PushTarget[]
    now: number
    maxDepth: number
    claim?: { limits: ClaimLimits; leaseUntil: number }
    done: (r: { queued: number; claimed: ClaimedDelivery[] }) => void
    fail: (err: unknown) => void
  }> = []

  enqueue(
    message: string,
    targets: readonly PushTarget[],
    now: number,
    maxDepth: number,
    claim?: { limits: ClaimLimits; leaseUntil: number },
  ): Promise<{ queued: number; claimed: ClaimedDelivery[] }> {
    if (targets.length === 0) return Promise.resolve({ queued: 0, claimed: [] })
    return new Promise((done, fail) => {
      this.enqueues.push({ message, targets, now, maxDepth, claim, done, fail })
      if (this.wroteThisTurn) return
      // The first of a turn: written now; the turn's end writes whatever queued behind it.
      this.wroteThisTurn = true
      this.flushEnqueues()
      setImmediate(() => {
        this.wroteThisTurn = false
        this.flushEnqueues()
      })
    })
  }
  private wroteThisTurn = false

  private flushEnqueues() {
    const batch = this.enqueues
    this.enqueues = []
    let results: Array<{ queued: number; claimed: ClaimedDelivery[] }>
    try {
      results = this.db.transaction(() => {
        let depth = (this.s.depth.get() as { n: number }).n
        return batch.map(({ message, targets, now, maxDepth, claim }) => {
          if (depth + targets.length > maxDepth) return { queued: 0, claimed: [] }
          depth += targets.length
          const left: ClaimLimits = { ...claim?.limits }
          const m = Number(this.s.insMessage.run(message).lastInsertRowid)
          const claimed: ClaimedDelivery[] = []
          for (const t of targets) {
            const taken = claim !== undefined && (left[t.platform] ?? 0) > 0
            if (taken) left[t.platform]!--
            const id = Number(this.s.insJob.run(m, t.platform, t.token, tokenHash(t.token), taken ? 1 : 0, taken ? claim.leaseUntil : now).lastInsertRowid)
            if (taken) claimed.push({ id, target: t, message, attempts: 1 })
          }
          return { queued: targets.length, claimed }
        })
      })()
    } catch (err) {
      for (const e of batch) e.fail(err)
      return
    }
    batch.forEach((e, i) => e.done(results[i]))
  }

  async claimDue(now: number, limit: number, leaseUntil: number, platform?: PushPlatform): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return []
    // IMMEDIATE: the write lock is taken before the read, so another handle's claim waits.
    return this.db
      .transaction(() => {
        const out: ClaimedDelivery[] = []
        const bodies = new Map<number, string>()
        const due = (platform ? this.s.dueOf.all(now, platform, limit) : this.s.due.all(now, limit)) as Array<{ id: number }>
        for (const { id } of due) {
          const j = this.s.claim.get(leaseUntil, id) as { id: number; message: number; platform: PushTarget['platform']; token: string; attempts: number }
          let body = bodies.get(j.message)
          if (body === undefined) bodies.set(j.message, (body = (this.s.body.get(j.message) as { body: string }).body))
          out.push({ id: j.id, target: { platform: j.platform, token: j.token }, message: body, attempts: j.attempts })
        }
        return out
      })
      .immediate()
  }

  /**
   * Resolves once the row is gone. Finishes of one event-loop turn share a commit (a commit is
   * most of what a finish costs on a file); a row not yet removed is still leased, so nobody
   * takes it meanwhile.
   */
  finish(id: number): Promise<void> {
    this.finished.push(id)
    this.finishing ??= new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        try {
          this.flushFinished()
          resolve()
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)))
        }
      }),
    )
    return this.finishing
  }

  private flushFinished() {
    const ids = this.finished
    this.finished = []
    this.finishing = undefined
    if (ids.length === 0) return
    this.db.transaction(() => {
      for (const id of ids) {
        const j = this.s.finishJob.get(id) as { message: number } | undefined
        if (j) this.s.delOrphan.run(j.message, j.message)
      }
    })()
  }

  async retryAt(id: number, dueAt: number): Promise<void> {
    this.s.retry.run(dueAt, id)
  }

  async nextDueAt(): Promise<number | undefined> {
    return (this.s.nextDue.get() as { t: number | null }).t ?? undefined
  }

  async queueStats(now: number): Promise<QueueStats> {
    const r = this.s.stats.get(now) as { depth: number; due: number }
    return { depth: r.depth, due: r.due }
  }

  async close(): Promise<void> {
    // Sends and finishes still waiting for their turn are written before the file closes.
    if (this.enqueues.length) this.flushEnqueues()
    if (this.finished.length) this.flushFinished()
    this.db.close()
  }
}
