import type { Env } from '../../core/env.ts'
import { errField, silentLogger, type Logger } from '../../core/log.ts'
import type { KeyPair } from '../../crypto/keys.ts'
import { PUSH_LIMITS } from './limits.ts'

export type PushPlatform = 'ios' | 'android' | 'ntfy' | 'webpush'

/** The node's answer (sync/protocol/push-wire.ts `PushReply`). */
export type LinkReply = { ok: true; validTopics?: number; delivered?: number } | { ok: false; code: string }

/**
 * How the module reaches the push node: typed requests, signed with the space push key and
 * framed by the daemon's side (node/push/link.ts over `/svc/push/1.0.0`). Each throws when
 * the node is unreachable.
 */
export interface PushNodeLink {
  subscribe(r: { pushKey: KeyPair; platform: PushPlatform; token: string; topics: string[]; ts: number }): Promise<LinkReply>
  unregister(r: { platform: PushPlatform; token: string; ts: number }): Promise<LinkReply>
  send(r: { pushKey: KeyPair; topics: string[]; keyId: string; payload: Uint8Array; groupId?: string; silent: boolean; except?: string; ts: number }): Promise<LinkReply>
}

/** One attempt of a job: its request on the link, or undefined when there is nothing to send. */
export type PushJob = (link: PushNodeLink) => Promise<LinkReply | undefined>

export interface OutboxStats {
  queued: number
  sent: number
  retried: number
  failed: number
  noTopics: number
}

/** Jobs waiting for a retry at once; past it a job is given up (push is best effort). */
const MAX_PENDING = 1000

/**
 * Sends to the push node, off the write path: a job builds its request on each attempt (signed
 * afresh, so a retry is never stale), tried up to 6 times 10 s apart on the env's clock (chat.md
 * "Limits"), stopping early when the node reports no valid topics or refuses for a reason a
 * retry cannot fix. Nothing here is awaited by an HTTP response.
 */
export class PushOutbox {
  readonly stats: OutboxStats = { queued: 0, sent: 0, retried: 0, failed: 0, noTopics: 0 }
  private readonly timers = new Set<() => void>()
  private closed = false

  constructor(
    private readonly env: Env,
    private readonly link: () => PushNodeLink | undefined,
    private readonly log: Logger = silentLogger,
  ) {}

  get pending(): number {
    return this.timers.size
  }

  enqueue(job: PushJob): void {
    if (this.closed) return
    this.stats.queued++
    void this.attempt(job, 1)
  }

  private async attempt(job: PushJob, n: number): Promise<void> {
    if (this.closed) return
    let retry = true
    let why: string | undefined
    try {
      const link = this.link()
      if (link) {
        const r = await job(link)
        if (!r) return
        if (r.ok) {
          if (r.validTopics === 0) this.stats.noTopics++
          else this.stats.sent++
          return
        }
        // Forged, malformed, too large: the same request fails the same way again.
        retry = r.code === 'rate_limited' || r.code === 'unavailable' || r.code === 'stale'
        why = r.code
      }
    } catch (err) {
      // Unreachable node: retried below.
      why = errField(err)
      this.log.debug('sending to the push node failed', { attempt: n, err: why })
    }
    if (!retry || n >= PUSH_LIMITS.sendAttempts || this.closed || this.timers.size >= MAX_PENDING) {
      this.stats.failed++
      // Closing drops what is pending on purpose; anything else is a push that never went out.
      if (!this.closed) this.log.warn('a push was given up', { attempts: n, reason: why ?? (this.timers.size >= MAX_PENDING ? 'too many pending' : 'no push node') })
      return
    }
    this.stats.retried++
    const cancel = this.env.setTimer(PUSH_LIMITS.sendRetryMs, () => {
      this.timers.delete(cancel)
      void this.attempt(job, n + 1)
    })
    this.timers.add(cancel)
  }

  close(): void {
    this.closed = true
    for (const c of this.timers) c()
    this.timers.clear()
  }
}
