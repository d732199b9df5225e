import pg from 'pg'
import { errField, type Logger } from '../../../sync/core/log.ts'

/** The channel every hub process LISTENs on; appendChanges NOTIFYs it in its transaction. */
export const HUB_APPEND_CHANNEL = 'svc_hub_append'

/**
 * A notification's payload, JSON: the space, its last seq after the append, and the store
 * instance that appended (so that process knows the notice is its own). Short keys: a payload may
 * not exceed 8,000 bytes, and a space id is some 45.
 */
export interface AppendNotice {
  s: string
  q: number
  p: string
}

export const noticePayload = (spaceId: string, lastSeq: number, instanceId: string): string => JSON.stringify({ s: spaceId, q: lastSeq, p: instanceId } satisfies AppendNotice)

function parseNotice(payload: string | undefined): AppendNotice | undefined {
  try {
    const n: unknown = JSON.parse(payload ?? '')
    if (typeof n !== 'object' || n === null || !('s' in n) || !('q' in n) || !('p' in n)) return undefined
    const { s, q, p } = n
    return typeof s === 'string' && typeof q === 'number' && Number.isSafeInteger(q) && typeof p === 'string' ? { s, q, p } : undefined
  } catch {
    return undefined // not JSON: reported by the caller as a notice it cannot read
  }
}

/** The reconnect's backoff: the first wait, doubled after each failure up to the last. */
export interface RetryBackoff {
  minMs: number
  maxMs: number
}
export const LISTEN_RETRY: RetryBackoff = { minMs: 100, maxMs: 5_000 }

/**
 * One dedicated connection that LISTENs for appends (a pooled connection cannot: the pool hands
 * it to queries and LISTEN belongs to the session). When it drops (PostgreSQL restarted, the
 * backend terminated, the network cut), it reconnects with backoff (100 ms doubling to 5 s, with
 * jitter so many processes do not return at once) and then reports every space whose last seq
 * passed what this process had heard: the notices sent while it was away are lost, the counters
 * in hub_spaces are not.
 *
 * `seen` keeps, per space, the highest seq this process reported or stored: a notice at or below
 * it says nothing new, which also drops the process's own notices and any a catch-up already
 * reported. One entry per space the database holds (some 100 bytes each).
 */
export class PgAppendChannel {
  private client: pg.Client | undefined
  private readonly seen = new Map<string, number>()
  private retryMs: number
  private timer: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly instanceId: string,
    private readonly heard: (spaceId: string, lastSeq: number) => void,
    private readonly log: Logger,
    private readonly backoff: RetryBackoff = LISTEN_RETRY,
  ) {
    this.retryMs = backoff.minMs
  }

  /** The first connection: LISTEN, then every space's last seq as the baseline (not reported). Rejects when it cannot connect. */
  async start(): Promise<void> {
    await this.connect(false)
  }

  /** This process stored changes of a space up to `lastSeq`: its own notice, or a catch-up, need not report them. */
  noteLocal(spaceId: string, lastSeq: number): void {
    this.advance(spaceId, lastSeq)
  }

  async stop(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    const c = this.client
    this.client = undefined
    await c?.end()
  }

  private advance(spaceId: string, seq: number): boolean {
    if (seq <= (this.seen.get(spaceId) ?? 0)) return false
    this.seen.set(spaceId, seq)
    return true
  }

  private async connect(report: boolean): Promise<void> {
    const c = new pg.Client(this.config)
    let lost: Error | undefined
    c.on('notification', (m) => this.notified(m.payload))
    // Before the client is adopted a drop only fails this attempt; after, it starts a reconnect.
    c.on('error', (err) => (c === this.client ? this.dropped(err) : (lost ??= err)))
    c.on('end', () => (c === this.client ? this.dropped(new Error('connection ended')) : (lost ??= new Error('connection ended'))))
    let rows: Array<{ space_id: string; last_seq: string }>
    try {
      await c.connect()
      await c.query(`LISTEN ${HUB_APPEND_CHANNEL}`)
      // After LISTEN: an append committed from here on is either in these rows or notified.
      rows = (await c.query<{ space_id: string; last_seq: string }>('SELECT space_id, last_seq FROM hub_spaces WHERE last_seq > 0')).rows
      if (lost !== undefined) throw lost
    } catch (err) {
      await c.end().catch((e: unknown) => this.log.debug('closing a failed listen connection', { err: errField(e) }))
      throw err
    }
    if (this.closed) {
      await c.end()
      return
    }
    this.client = c
    this.retryMs = this.backoff.minMs
    for (const r of rows) {
      const seq = Number(r.last_seq)
      if (this.advance(r.space_id, seq) && report) this.heard(r.space_id, seq)
    }
  }

  private notified(payload: string | undefined): void {
    const n = parseNotice(payload)
    if (n === undefined) {
      this.log.warn('unreadable append notice', { payload: (payload ?? '').slice(0, 100) })
      return
    }
    if (this.advance(n.s, n.q) && n.p !== this.instanceId) this.heard(n.s, n.q)
  }

  private dropped(err: unknown): void {
    this.client = undefined
    this.log.warn('listen connection dropped; reconnecting', { err: errField(err) })
    this.retry()
  }

  private retry(): void {
    if (this.closed) return
    const wait = Math.round(this.retryMs * (0.5 + Math.random() / 2))
    this.retryMs = Math.min(this.retryMs * 2, this.backoff.maxMs)
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.connect(true).then(
        () => this.log.info('listen connection restored'),
        (err: unknown) => {
          this.log.warn('listen connection failed; retrying', { err: errField(err), inMs: this.retryMs })
          this.retry()
        },
      )
    }, wait)
  }
}
