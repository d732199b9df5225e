import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import { PUSH_LIMITS } from '../../sync/modules/push/limits.ts'
import { toBase64 } from '../../sync/core/base64.ts'
import { RateBuckets } from '../../sync/protocol/rate-buckets.ts'
import {
  decodePushRequest,
  MalformedPush,
  PUSH_PLATFORMS,
  validTopicsOf,
  verifyPushRequest,
  type PushPlatform,
  type PushReply,
  type SendRequest,
  type SubscribeRequest,
} from '../../sync/protocol/push-wire.ts'
import { errField, scopedLogger, type Logger } from './log.ts'
import { PROVIDER_TIMEOUT_MS, type ProviderMessage, type ProviderResult, type PushProvider } from './providers/provider.ts'
import { tokenHash, type ClaimedDelivery, type ClaimLimits, type SubscriptionStore } from './store.ts'

export interface PushNodeCoreOptions {
  store: SubscriptionStore
  providers: readonly PushProvider[]
  crypto: CryptoProvider
  now?: () => number
  /** Peers and space keys whose rate buckets are kept at once (older ones are evicted). */
  maxTrackedKeys?: number
  /** An operator's rates, per peer and per space key, instead of PUSH_LIMITS's. */
  rates?: PushNodeRates
  /** An operator's bounds on what the store holds, instead of PUSH_NODE_BOUNDS. */
  bounds?: PushNodeBounds
  /** An operator's retry policy, instead of PUSH_NODE_RETRY. */
  retry?: RetryPolicy
  log?: Logger
}

export interface PushNodeRates {
  registrationsBurst?: number
  registrationsPerMinute?: number
  sendsBurst?: number
  sendsPerMinute?: number
}

export interface PushNodeBounds {
  /** Subscriptions (topic rows) the registrations a peer last set may hold together. */
  subscriptionsPerPeer?: number
  /** Subscriptions the node holds in all. */
  subscriptions?: number
  /** A registration not renewed (subscribed again) this long is evicted. */
  idleTtlMs?: number
  /** Deliveries waiting in the queue at once; a send past it is accepted and dropped (counted). */
  maxQueued?: number
}

export interface RetryPolicy {
  /** The first pause after a failed attempt; each later one doubles, up to `maxMs`. */
  baseMs?: number
  maxMs?: number
  /** Attempts in all (the first included) before a delivery is given up. */
  attempts?: number
  /** A provider's Retry-After is honored up to this long. */
  maxRetryAfterMs?: number
}

/**
 * Default bounds. A daemon holds one registration per space with at most a few thousand topics
 * (per-chat topics of a busy account), so 20,000 per peer is generous for one and small for a
 * stranger minting space keys; the node's total caps its store whatever the number of peers.
 * Daemons renew their registrations daily (PUSH_LIMITS.subscriptionRefreshMs), so 14 idle days
 * only ever drops what nobody renews.
 */
export const PUSH_NODE_BOUNDS: Required<PushNodeBounds> = {
  subscriptionsPerPeer: 20_000,
  subscriptions: 2_000_000,
  idleTtlMs: 14 * 24 * 3600_000,
  maxQueued: 100_000,
}

/** 5 s doubling to 30 min, 8 attempts: about an hour and a half of provider outage is bridged. */
export const PUSH_NODE_RETRY: Required<RetryPolicy> = { baseMs: 5_000, maxMs: 30 * 60_000, attempts: 8, maxRetryAfterMs: 60 * 60_000 }

/** What the health endpoint reports. */
export interface PushNodeCounters {
  requests: number
  subscribes: number
  unregisters: number
  sends: number
  /** Attempts a provider took. */
  forwarded: number
  /** Attempts that failed (each retry's too). */
  providerFailed: number
  /** Tokens dropped because a provider said 404/410. */
  tokensDropped: number
  /** Attempts the endpoint rules kept from leaving (the token is dropped). */
  endpointsRefused: number
  /** Failed attempts queued again. */
  retried: number
  /** Deliveries given up (attempts used, or refused for good by the provider). */
  gaveUp: number
  /** Deliveries not queued because the queue was full. */
  queueDropped: number
  /** Registrations evicted idle. */
  evicted: number
  refused: Record<string, number>
}

/**
 * Provider calls in flight at once per platform, all sends together: a send to many devices
 * never opens thousands of sockets. Per platform, because a Web Push endpoint is any public host
 * a subscriber names: hosts that stall each hold a slot for the whole timeout, and they must not
 * hold the APNs, FCM and ntfy deliveries (operators' own providers) up as well.
 */
const DELIVERY_CONCURRENCY: Record<PushPlatform, number> = { ios: 32, android: 32, ntfy: 32, webpush: 16 }
/** A claimed delivery stays hidden this long: past it, a process that died mid-attempt has its deliveries taken again. */
const LEASE_MS = PROVIDER_TIMEOUT_MS + 15_000
/** One log line per kind of failure per this long; the counters have the rest. */
const LOG_EVERY_MS = 10_000

/**
 * The push node's rules, transport aside (server.ts hands it each request frame): decode, check
 * freshness, rate, the space key's signature and the bounds, then store a subscription or queue
 * a sealed payload for the subscribed tokens' providers. The node holds (space key, topic) to
 * (platform, token) and sealed bytes in passing; it has no key that opens them.
 *
 * A send is answered once its deliveries are queued, before any provider is asked: the reply
 * (`{ok, validTopics}`) is the same whether the endpoints behind the topics took the push,
 * refused it, are unreachable or hang, so a stranger cannot use the node to probe addresses.
 * Deliveries wait in the store and are retried with backoff (and a provider's Retry-After);
 * they survive a restart.
 */
export class PushNodeCore {
  readonly counters: PushNodeCounters = {
    requests: 0,
    subscribes: 0,
    unregisters: 0,
    sends: 0,
    forwarded: 0,
    providerFailed: 0,
    tokensDropped: 0,
    endpointsRefused: 0,
    retried: 0,
    gaveUp: 0,
    queueDropped: 0,
    evicted: 0,
    refused: {},
  }
  private readonly now: () => number
  private readonly providers = new Map<PushPlatform, PushProvider>()
  private readonly regByKey: RateBuckets
  private readonly regByPeer: RateBuckets
  private readonly sendByKey: RateBuckets
  private readonly sendByPeer: RateBuckets
  private readonly bounds: Required<PushNodeBounds>
  private readonly retry: Required<RetryPolicy>
  private readonly log: Logger
  private readonly logged = new Map<string, { at: number; suppressed: number }>()

  private inFlight = 0
  private readonly inFlightOf = new Map<PushPlatform, number>()
  private readonly running = new Set<Promise<void>>()
  private pumping: Promise<void> | undefined
  private again = false
  private wake: { timer: NodeJS.Timeout; at: number } | undefined
  private sweepTimer: NodeJS.Timeout | undefined
  private pollMs: number | undefined
  /** The next pump asks the store when the next delivery is due (deliveries left by an earlier run). */
  private armOnce = false
  /**
   * Whether the store may hold deliveries due now that nobody took: set where they can appear (a
   * send with more targets than free slots, a wake, a start), so a delivery finishing in the
   * common case (everything taken as it was queued) costs no claim round trip.
   */
  private maybeDue = false
  /** Pause before the pump tries a failing store again: doubles per failure, so a broken store is not hammered. */
  private pumpBackoffMs = 0
  private closed = false
  /** Attempts in flight, each with its own controller: a timeout or the node closing aborts it. */
  private readonly attempts = new Set<AbortController>()

  constructor(private readonly o: PushNodeCoreOptions) {
    this.now = o.now ?? Date.now
    for (const p of o.providers) this.providers.set(p.platform, p)
    const max = o.maxTrackedKeys ?? 10_000
    const L = { ...PUSH_LIMITS, ...o.rates }
    this.regByKey = new RateBuckets(L.registrationsBurst, 60_000 / L.registrationsPerMinute, max, this.now)
    this.regByPeer = new RateBuckets(L.registrationsBurst, 60_000 / L.registrationsPerMinute, max, this.now)
    this.sendByKey = new RateBuckets(L.sendsBurst, 60_000 / L.sendsPerMinute, max, this.now)
    this.sendByPeer = new RateBuckets(L.sendsBurst, 60_000 / L.sendsPerMinute, max, this.now)
    this.bounds = { ...PUSH_NODE_BOUNDS, ...o.bounds }
    this.retry = { ...PUSH_NODE_RETRY, ...o.retry }
    this.log = o.log ?? scopedLogger('push-node')
  }

  get platforms(): PushPlatform[] {
    return [...this.providers.keys()]
  }

  /**
   * Starts the background work a running node does: deliveries left queued by an earlier run
   * are taken up, idle registrations are swept every `sweepMs`, and the queue is polled every
   * `pollMs` (a shared store's other processes queue retries this one may take).
   */
  start(opts: { sweepMs?: number; pollMs?: number } = {}): void {
    this.pollMs = opts.pollMs
    const sweepMs = opts.sweepMs ?? 3600_000
    const sweep = () => {
      this.evictIdle().catch((err: unknown) => this.log.child('sweep').error('idle sweep failed', { err: errField(err) }))
      this.sweepTimer = setTimeout(sweep, sweepMs)
      this.sweepTimer.unref()
    }
    sweep()
    this.armOnce = true
    this.maybeDue = true
    this.kick()
  }

  async handle(peer: string, bytes: Uint8Array): Promise<PushReply> {
    this.counters.requests++
    const reply = await this.judge(peer, bytes).catch((err: unknown) => {
      if (err instanceof MalformedPush) return refuse('malformed')
      this.log.error('request failed', { err: errField(err) })
      return refuse('unavailable')
    })
    if (!reply.ok) this.counters.refused[reply.code] = (this.counters.refused[reply.code] ?? 0) + 1
    return reply
  }

  private async judge(peer: string, bytes: Uint8Array): Promise<PushReply> {
    const r = decodePushRequest(bytes)
    if (Math.abs(this.now() - r.ts) > PUSH_LIMITS.requestSkewMs) return refuse('stale')
    if (r.op === 'unregister') {
      if (!this.regByPeer.take(peer)) return refuse('rate_limited')
      this.counters.unregisters++
      await this.o.store.removeToken({ platform: r.platform, token: r.token })
      return { ok: true }
    }
    // The peer's bucket first: a stranger spraying forged requests pays before any signature check.
    const byPeer = r.op === 'subscribe' ? this.regByPeer : this.sendByPeer
    if (!byPeer.take(peer)) return refuse('rate_limited')
    if (!(await verifyPushRequest(this.o.crypto, r))) return refuse('forged')
    const byKey = r.op === 'subscribe' ? this.regByKey : this.sendByKey
    if (!byKey.take(r.spaceKey)) return refuse('rate_limited')
    const topics = validTopicsOf(r.topics)
    if (r.op === 'send') return this.send(r, topics)
    return this.subscribe(peer, r, topics)
  }

  private async subscribe(peer: string, r: SubscribeRequest, topics: string[]): Promise<PushReply> {
    if (!this.providers.has(r.platform)) return refuse('malformed')
    if (topics.length > PUSH_LIMITS.maxTopicsPerSpaceToken) return refuse('too_many_topics')
    const target = { platform: r.platform, token: r.token }
    const store = this.o.store
    if (topics.length) {
      const reg = await store.registrationOf(r.spaceKey, target)
      if (!reg && (await store.tokenCount(r.spaceKey)) >= PUSH_LIMITS.maxTokensPerSpaceKey) return refuse('too_many_tokens')
      // A registration counts against the peer that set it last: taking one over moves all of it.
      const peerGrowth = topics.length - (reg && reg.peer === peer ? reg.topics : 0)
      const totalGrowth = topics.length - (reg?.topics ?? 0)
      if (peerGrowth > 0 || totalGrowth > 0) {
        const used = await store.usage(peer)
        if (peerGrowth > 0 && used.peer + peerGrowth > this.bounds.subscriptionsPerPeer) return refuse('too_many_topics')
        if (totalGrowth > 0 && used.total + totalGrowth > this.bounds.subscriptions) {
          this.throttledLog('warn', 'store full', 'the node holds its cap of subscriptions: new registrations are refused until idle ones are evicted', {
            cap: this.bounds.subscriptions,
          })
          return refuse('unavailable')
        }
      }
    }
    this.counters.subscribes++
    await store.setTopics(r.spaceKey, target, topics, { peer, at: this.now() })
    return { ok: true, validTopics: topics.length }
  }

  private async send(r: SendRequest, topics: string[]): Promise<PushReply> {
    if (r.payload.length > PUSH_LIMITS.maxSealedBytes) return refuse('too_large')
    this.counters.sends++
    if (topics.length === 0) return { ok: true, validTopics: 0 }
    // The sending device's own token is skipped: a device is never notified of its own write.
    const targets = (await this.o.store.targetsFor(r.spaceKey, topics)).filter((t) => r.except === undefined || tokenHash(t.token) !== r.except)
    if (targets.length) {
      const message: ProviderMessage = { spaceKey: r.spaceKey, keyId: r.keyId, payload: toBase64(r.payload), silent: r.silent }
      if (r.groupId) message.groupId = r.groupId
      const now = this.now()
      const limits: ClaimLimits = {}
      if (!this.closed) for (const p of PUSH_PLATFORMS) limits[p] = this.free(p)
      const { queued, claimed } = await this.o.store.enqueue(JSON.stringify(message), targets, now, this.bounds.maxQueued, { limits, leaseUntil: now + LEASE_MS })
      if (queued) {
        // Slots taken while the store was written are given back by the next finishing delivery.
        for (const j of claimed) this.startDelivery(j)
        if (claimed.length < targets.length) {
          this.maybeDue = true
          this.kick()
        }
      } else {
        this.counters.queueDropped += targets.length
        this.throttledLog('warn', 'queue full', 'the delivery queue is full: a send was dropped', { targets: targets.length, cap: this.bounds.maxQueued })
      }
    }
    return { ok: true, validTopics: topics.length }
  }

  /** Drops registrations idle past the TTL; answers how many went. */
  async evictIdle(): Promise<number> {
    const n = await this.o.store.evictIdle(this.now() - this.bounds.idleTtlMs)
    this.counters.evicted += n
    if (n) this.log.info('evicted idle registrations', { count: n })
    return n
  }

  /** Queue depth for the health endpoint, deliveries in flight included. */
  async queue(): Promise<{ depth: number; due: number; inFlight: number }> {
    return { ...(await this.o.store.queueStats(this.now())), inFlight: this.inFlight }
  }

  // ------------------------------------------------------------------ delivery

  /** Takes due deliveries up to the concurrency (coalesced: a kick while pumping pumps again). */
  private kick(): void {
    if (this.closed) return
    if (this.pumping) {
      this.again = true
      return
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined
      // A kick that came after the pump's last look at `again` but before this: not lost.
      if (this.again) this.kick()
    })
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.again = false
        if (this.maybeDue) {
          // Cleared before the look: rows queued while it runs set it again.
          this.maybeDue = false
          for (const p of PUSH_PLATFORMS) {
            if (this.closed) break
            const free = this.free(p)
            // A full platform: its next finishing delivery looks again.
            if (free <= 0) {
              this.maybeDue = true
              continue
            }
            const now = this.now()
            const jobs = await this.o.store.claimDue(now, free, now + LEASE_MS, p)
            for (const j of jobs) this.startDelivery(j)
            // A full batch: more may be due, look again at once.
            if (jobs.length >= free) this.maybeDue = this.again = true
          }
        }
        // Retries arm their own wake and a finishing delivery kicks: the store is asked for the
        // next due time only where no one else will (a start, a shared store's poll).
        if (!this.closed && (this.armOnce || this.pollMs !== undefined)) {
          this.armOnce = false
          await this.armWake()
        }
      } while (this.again && !this.closed)
      this.pumpBackoffMs = 0
    } catch (err) {
      if (this.closed) return
      this.pumpBackoffMs = Math.min(60_000, Math.max(1_000, this.pumpBackoffMs * 2))
      this.throttledLog('error', 'pump', 'delivery queue failed', { err: errField(err), retryInMs: this.pumpBackoffMs })
      this.armOnce = true
      this.setWake(this.pumpBackoffMs)
    }
  }

  /** A timer for the next due delivery (or the poll), unless deliveries in flight will kick first. */
  private async armWake() {
    const next = await this.o.store.nextDueAt()
    const now = this.now()
    let delay = next === undefined ? undefined : Math.max(10, next - now)
    if (this.pollMs !== undefined) delay = Math.min(delay ?? this.pollMs, this.pollMs)
    if (delay !== undefined) this.setWake(delay)
  }

  private setWake(delay: number) {
    const at = Date.now() + delay
    if (this.wake && this.wake.at <= at) return
    if (this.wake) clearTimeout(this.wake.timer)
    const timer = setTimeout(() => {
      this.wake = undefined
      // Later retries gave up their own wake to this earlier one: look for the next one again.
      this.armOnce = true
      this.maybeDue = true
      this.kick()
    }, delay)
    timer.unref()
    this.wake = { timer, at }
  }

  private free(p: PushPlatform): number {
    return Math.max(0, DELIVERY_CONCURRENCY[p] - (this.inFlightOf.get(p) ?? 0))
  }

  private startDelivery(j: ClaimedDelivery) {
    const p = j.target.platform
    this.inFlight++
    this.inFlightOf.set(p, (this.inFlightOf.get(p) ?? 0) + 1)
    const run = this.deliver(j)
      .catch((err: unknown) => this.log.error('delivery failed', { platform: p, err: errField(err) }))
      .finally(() => {
        this.inFlight--
        this.inFlightOf.set(p, (this.inFlightOf.get(p) ?? 1) - 1)
        this.running.delete(run)
        // A slot is free: deliveries left waiting for one go now.
        if (this.maybeDue) this.kick()
      })
    this.running.add(run)
  }

  private async deliver(j: ClaimedDelivery): Promise<void> {
    const store = this.o.store
    const provider = this.providers.get(j.target.platform)
    let message: ProviderMessage
    try {
      message = JSON.parse(j.message) as ProviderMessage
    } catch (err) {
      // Only this node writes the queue: a row it cannot read is dropped, never retried forever.
      this.log.error('unreadable queued message dropped', { err: errField(err) })
      return store.finish(j.id)
    }
    let res: ProviderResult
    if (!provider) res = { kind: 'failed', why: `no ${j.target.platform} provider configured` }
    else res = await this.attempt(provider, j.target.token, message)
    if (this.closed && res.kind === 'retry') {
      // Cut short by close: due again at once for the next run, this attempt not counted.
      await store.retryAt(j.id, this.now())
      return
    }
    switch (res.kind) {
      case 'ok':
        this.counters.forwarded++
        return store.finish(j.id)
      case 'gone':
        this.counters.tokensDropped++
        await store.removeToken(j.target)
        return
      case 'refused':
        this.counters.endpointsRefused++
        this.throttledLog('info', `refused ${j.target.platform}`, "endpoint refused by the node's rules; token dropped", { platform: j.target.platform, why: res.why })
        await store.removeToken(j.target)
        return
      case 'failed':
        this.counters.providerFailed++
        this.counters.gaveUp++
        this.throttledLog('warn', `failed ${j.target.platform} ${res.why}`, 'provider refused a push for good', { platform: j.target.platform, why: res.why })
        return store.finish(j.id)
      case 'retry': {
        this.counters.providerFailed++
        if (j.attempts >= this.retry.attempts) {
          this.counters.gaveUp++
          this.throttledLog('warn', `gave up ${j.target.platform}`, 'push given up after its attempts', { platform: j.target.platform, attempts: j.attempts, why: res.why })
          return store.finish(j.id)
        }
        this.counters.retried++
        this.throttledLog('warn', `retry ${j.target.platform} ${res.why}`, 'provider attempt failed; retrying', { platform: j.target.platform, attempt: j.attempts, why: res.why })
        const delay = Math.max(this.backoff(j.attempts), Math.min(res.retryAfterMs ?? 0, this.retry.maxRetryAfterMs))
        await store.retryAt(j.id, this.now() + delay)
        this.setWake(delay)
        return
      }
    }
  }

  private async attempt(provider: PushProvider, token: string, message: ProviderMessage): Promise<ProviderResult> {
    const ac = new AbortController()
    this.attempts.add(ac)
    const timer = setTimeout(() => ac.abort(new Error(`no answer in ${PROVIDER_TIMEOUT_MS} ms`)), PROVIDER_TIMEOUT_MS)
    try {
      return await provider.send(token, message, ac.signal)
    } finally {
      clearTimeout(timer)
      this.attempts.delete(ac)
    }
  }

  /** The pause after attempt `n`: doubling from `baseMs`, capped, with up to a quarter taken off at random so retries spread. */
  private backoff(n: number): number {
    const d = Math.min(this.retry.maxMs, this.retry.baseMs * 2 ** Math.min(n - 1, 30))
    return Math.round(d * (0.75 + Math.random() * 0.25))
  }

  private throttledLog(level: 'info' | 'warn' | 'error', key: string, msg: string, fields: Record<string, unknown>) {
    const now = Date.now()
    const seen = this.logged.get(key)
    if (seen && now - seen.at < LOG_EVERY_MS) {
      seen.suppressed++
      return
    }
    if (this.logged.size > 1000) this.logged.clear()
    this.logged.set(key, { at: now, suppressed: 0 })
    this.log[level](msg, { ...fields, ...(seen?.suppressed ? { suppressedSinceLast: seen.suppressed } : {}) })
  }

  /** Stops the background work; deliveries in flight are cut short and left due for the next run. */
  async close(): Promise<void> {
    this.closed = true
    if (this.wake) clearTimeout(this.wake.timer)
    if (this.sweepTimer) clearTimeout(this.sweepTimer)
    for (const ac of this.attempts) ac.abort(new Error('push node closing'))
    await this.pumping
    await Promise.allSettled([...this.running])
  }
}

const refuse = (code: Extract<PushReply, { ok: false }>['code']): PushReply => ({ ok: false, code })
