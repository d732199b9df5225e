import { BoundedMap } from './bounded-map.ts'
import { OFFER_LIMITS } from './limits.ts'
import { RateBuckets } from './rate-buckets.ts'

export interface OfferStats {
  /** Offers handed to the handler. */
  taken: number
  /** Offers dropped by a bound (in flight, per account, rate, repeat). */
  dropped: number
}

/**
 * Bounds what offers cost (docs/protocol.md, "Offers"): an authenticated account that opens an
 * exchange about a space we do not hold may be a member who added us, so the host is told, but
 * at most OFFER_LIMITS.maxInFlight handlers run at once (maxInFlightPerIdentity per account), an
 * account's offers and all accounts' together are rate limited, and the same (space, account) is not handed over again for
 * repeatAfterMs. Every table is bounded. Whatever happens here, the offering peer's answer is
 * the one for a space we do not hold: this never delays it (the handler runs detached).
 */
export class OfferGate {
  private inFlight = 0
  private readonly perIdentity = new BoundedMap<string, number>(OFFER_LIMITS.maxTracked)
  private readonly seen = new BoundedMap<string, number>(OFFER_LIMITS.maxTracked)
  private readonly rate: RateBuckets
  private readonly globalRate: RateBuckets
  readonly stats: OfferStats = { taken: 0, dropped: 0 }

  constructor(
    private readonly handler: (spaceId: string, identity: string, peer: string) => Promise<unknown>,
    private readonly now: () => number,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    this.rate = new RateBuckets(OFFER_LIMITS.burstPerIdentity, OFFER_LIMITS.refillMsPerIdentity, OFFER_LIMITS.maxTracked, now)
    this.globalRate = new RateBuckets(OFFER_LIMITS.globalBurst, OFFER_LIMITS.globalRefillMs, 1, now)
  }

  /** Hands the offer to the handler if every bound allows; true when it did. Never waits for it. */
  offer(spaceId: string, identity: string, peer: string): boolean {
    const key = `${spaceId}\u0000${identity}`
    const t = this.now()
    const last = this.seen.peek(key)
    const mine = this.perIdentity.peek(identity) ?? 0
    if (
      (last !== undefined && t - last < OFFER_LIMITS.repeatAfterMs) ||
      this.inFlight >= OFFER_LIMITS.maxInFlight ||
      mine >= OFFER_LIMITS.maxInFlightPerIdentity ||
      !this.rate.take(identity) ||
      !this.globalRate.take('')
    ) {
      this.stats.dropped++
      return false
    }
    this.seen.set(key, t)
    this.inFlight++
    this.perIdentity.set(identity, mine + 1)
    this.stats.taken++
    const settle = () => {
      this.inFlight--
      const n = (this.perIdentity.peek(identity) ?? 1) - 1
      if (n > 0) this.perIdentity.set(identity, n)
      else this.perIdentity.delete(identity)
    }
    let p: Promise<unknown>
    try {
      p = Promise.resolve(this.handler(spaceId, identity, peer))
    } catch (err) {
      p = Promise.reject(err instanceof Error ? err : new Error(String(err)))
    }
    p.catch(this.onError).finally(settle)
    return true
  }

  /** Handlers running now (for tests of the bound). */
  get running(): number {
    return this.inFlight
  }
}
