import { BoundedMap } from './bounded-map.ts'

/**
 * Token buckets by key (a peer, an account): `burst` takes at once, then one more every
 * `refillMs`. Keys are kept in a BoundedMap, so a stranger minting keys evicts old buckets but
 * never grows the table; an evicted key starts again with a full bucket, which costs the
 * stranger a fresh key (a connection and an authentication) per burst.
 */
export class RateBuckets {
  private readonly buckets: BoundedMap<string, { tokens: number; at: number }>

  constructor(
    private readonly burst: number,
    private readonly refillMs: number,
    maxKeys: number,
    private readonly now: () => number,
  ) {
    this.buckets = new BoundedMap(maxKeys)
  }

  /** Takes one token for `key`; false when its bucket is empty. */
  take(key: string): boolean {
    const t = this.now()
    let b = this.buckets.get(key)
    if (!b) this.buckets.set(key, (b = { tokens: this.burst, at: t }))
    else {
      const refill = Math.floor((t - b.at) / this.refillMs)
      if (refill > 0) {
        b.tokens = Math.min(this.burst, b.tokens + refill)
        b.at = b.tokens === this.burst ? t : b.at + refill * this.refillMs
      }
    }
    if (b.tokens <= 0) return false
    b.tokens--
    return true
  }

  get size(): number {
    return this.buckets.size
  }
}
