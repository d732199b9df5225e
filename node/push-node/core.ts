import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import { PUSH_LIMITS } from '../../sync/modules/push/limits.ts'
import { toBase64 } from '../../sync/modules/push/base64.ts'
import { RateBuckets } from '../../sync/protocol/rate-buckets.ts'
import { decodePushRequest, MalformedPush, validTopicsOf, verifyPushRequest, type PushPlatform, type PushReply, type SendRequest } from '../../sync/protocol/push-wire.ts'
import type { ProviderMessage, PushProvider } from './providers/provider.ts'
import type { SubscriptionStore } from './store.ts'

export interface PushNodeCoreOptions {
  store: SubscriptionStore
  providers: readonly PushProvider[]
  crypto: CryptoProvider
  now?: () => number
  /** Peers and space keys whose rate buckets are kept at once (older ones are evicted). */
  maxTrackedKeys?: number
  /** An operator's rates, per peer and per space key, instead of PUSH_LIMITS's. */
  rates?: PushNodeRates
}

export interface PushNodeRates {
  registrationsBurst?: number
  registrationsPerMinute?: number
  sendsBurst?: number
  sendsPerMinute?: number
}

/** What the health endpoint reports. */
export interface PushNodeCounters {
  requests: number
  subscribes: number
  unregisters: number
  sends: number
  forwarded: number
  providerFailed: number
  tokensDropped: number
  refused: Record<string, number>
}

/** Provider calls of one send in flight at once: a send to many devices never opens thousands of sockets. */
const FORWARD_CONCURRENCY = 32

/**
 * The push node's rules, transport aside (server.ts hands it each request frame): decode, check
 * freshness, rate, the space key's signature and the bounds, then store a subscription or forward
 * a sealed payload to the subscribed tokens' providers. The node holds (space key, topic) to
 * (platform, token) and sealed bytes in passing; it has no key that opens them.
 */
export class PushNodeCore {
  readonly counters: PushNodeCounters = { requests: 0, subscribes: 0, unregisters: 0, sends: 0, forwarded: 0, providerFailed: 0, tokensDropped: 0, refused: {} }
  private readonly now: () => number
  private readonly providers = new Map<PushPlatform, PushProvider>()
  private readonly regByKey: RateBuckets
  private readonly regByPeer: RateBuckets
  private readonly sendByKey: RateBuckets
  private readonly sendByPeer: RateBuckets

  constructor(private readonly o: PushNodeCoreOptions) {
    this.now = o.now ?? Date.now
    for (const p of o.providers) this.providers.set(p.platform, p)
    const max = o.maxTrackedKeys ?? 10_000
    const L = { ...PUSH_LIMITS, ...o.rates }
    this.regByKey = new RateBuckets(L.registrationsBurst, 60_000 / L.registrationsPerMinute, max, this.now)
    this.regByPeer = new RateBuckets(L.registrationsBurst, 60_000 / L.registrationsPerMinute, max, this.now)
    this.sendByKey = new RateBuckets(L.sendsBurst, 60_000 / L.sendsPerMinute, max, this.now)
    this.sendByPeer = new RateBuckets(L.sendsBurst, 60_000 / L.sendsPerMinute, max, this.now)
  }

  get platforms(): PushPlatform[] {
    return [...this.providers.keys()]
  }

  async handle(peer: string, bytes: Uint8Array): Promise<PushReply> {
    this.counters.requests++
    const reply = await this.judge(peer, bytes).catch((err) => (err instanceof MalformedPush ? refuse('malformed') : refuse('unavailable')))
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
    if (!this.providers.has(r.platform)) return refuse('malformed')
    if (topics.length > PUSH_LIMITS.maxTopicsPerSpaceToken) return refuse('too_many_topics')
    const target = { platform: r.platform, token: r.token }
    if (topics.length && (await this.o.store.topicsOf(r.spaceKey, target)).length === 0 && (await this.o.store.tokenCount(r.spaceKey)) >= PUSH_LIMITS.maxTokensPerSpaceKey) return refuse('too_many_tokens')
    this.counters.subscribes++
    await this.o.store.setTopics(r.spaceKey, target, topics)
    return { ok: true, validTopics: topics.length }
  }

  private async send(r: SendRequest, topics: string[]): Promise<PushReply> {
    if (r.payload.length > PUSH_LIMITS.maxSealedBytes) return refuse('too_large')
    this.counters.sends++
    if (topics.length === 0) return { ok: true, validTopics: 0, delivered: 0 }
    const targets = await this.o.store.targetsFor(r.spaceKey, topics)
    const message: ProviderMessage = { spaceKey: r.spaceKey, keyId: r.keyId, payload: toBase64(r.payload), silent: r.silent }
    if (r.groupId) message.groupId = r.groupId
    let delivered = 0
    let next = 0
    const worker = async () => {
      while (next < targets.length) {
        const t = targets[next++]
        const p = this.providers.get(t.platform)
        const res = p ? await p.send(t.token, message) : 'failed'
        if (res === 'ok') delivered++
        else if (res === 'gone') {
          this.counters.tokensDropped++
          await this.o.store.removeToken(t).catch(() => undefined)
        } else this.counters.providerFailed++
      }
    }
    await Promise.all(Array.from({ length: Math.min(FORWARD_CONCURRENCY, targets.length) }, worker))
    this.counters.forwarded += delivered
    return { ok: true, validTopics: topics.length, delivered }
  }
}

const refuse = (code: Extract<PushReply, { ok: false }>['code']): PushReply => ({ ok: false, code })
