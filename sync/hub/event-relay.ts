import { EVENTS } from '../core/events-limits.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { BoundedMap } from '../protocol/bounded-map.ts'
import { decodeEventFrame, MalformedEvent, verifyEventFrame } from '../protocol/events-wire.ts'
import { PEER_LIMITS } from '../protocol/limits.ts'
import { RateBuckets } from '../protocol/rate-buckets.ts'
import { isFullMember } from '../replica/full-membership.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'

/** Why the hub did not relay a frame (counted; nothing is answered). */
export type RelayDrop = 'rate' | 'unauthenticated' | 'malformed' | 'signer_mismatch' | 'stale' | 'duplicate' | 'unknown_space' | 'not_member' | 'bad_signature'

export interface EventRelayHost {
  /** The kept replica of a space open here, if any (the hub knows its ACL, never its key). */
  replica(spaceId: string): SpaceReplica | undefined
  /** Connected peers with the account each proved. */
  peers(): Array<{ peer: string; identity: string | undefined }>
}

/**
 * The hub's relay of live traffic (docs/hub.md "Live traffic"; docs/protocol.md section 12):
 * the event bus's space and account events, editor cursors and awareness ride on it. A frame is
 * relayed only when the peer sent its own event (signer = the account it proved), fresh, not
 * seen before, about a space the hub keeps whose ACL makes the signer a full member, with a
 * valid signature; it goes unchanged to the connected peers whose account is a full member too
 * (an account event: to the signer's other devices only). The body is sealed under the space's
 * read key, which the hub never holds: it sees the space id, the signer, sizes and timing.
 * Bounded like a daemon's receiver: each peer's rate, the frame size, an LRU of event ids.
 */
export class EventRelay {
  private readonly rates: RateBuckets
  private readonly seen: BoundedMap<string, true>
  readonly drops: Partial<Record<RelayDrop, number>> = {}
  relayed = 0

  constructor(
    private readonly host: EventRelayHost,
    private readonly crypto: CryptoProvider,
    private readonly now: () => number,
  ) {
    this.seen = new BoundedMap(EVENTS.dedupeIds)
    this.rates = new RateBuckets(EVENTS.publishBurst, EVENTS.publishRefillMs, PEER_LIMITS.maxPeerCounters, now)
  }

  /** The peers to forward a frame to, or why it is dropped. */
  async route(peer: string, identity: string | undefined, bytes: Uint8Array): Promise<string[] | RelayDrop> {
    const r = await this.judge(peer, identity, bytes)
    if (typeof r === 'string') this.drops[r] = (this.drops[r] ?? 0) + 1
    else this.relayed++
    return r
  }

  private async judge(peer: string, identity: string | undefined, bytes: Uint8Array): Promise<string[] | RelayDrop> {
    if (!this.rates.take(peer)) return 'rate'
    if (identity === undefined) return 'unauthenticated'
    if (bytes.length > EVENTS.maxFrameBytes) return 'malformed'
    let f
    try {
      f = decodeEventFrame(bytes)
    } catch (err) {
      if (err instanceof MalformedEvent) return 'malformed'
      throw err
    }
    if (f.signer !== identity) return 'signer_mismatch'
    if (Math.abs(this.now() - f.timestamp) > EVENTS.maxClockSkewMs) return 'stale'
    const key = `${f.signer}/${f.eventId}`
    if (this.seen.has(key)) return 'duplicate'
    const replica = this.host.replica(f.spaceId)
    if (!replica?.known) return 'unknown_space'
    if (!isFullMember(replica, f.signer)) return 'not_member'
    if (!(await verifyEventFrame(f, this.crypto))) return 'bad_signature'
    if (this.seen.has(key)) return 'duplicate'
    this.seen.set(key, true)
    const to: string[] = []
    for (const p of this.host.peers()) {
      if (p.peer === peer || p.identity === undefined) continue
      if (f.scope === 'account' ? p.identity === f.signer : isFullMember(replica, p.identity)) to.push(p.peer)
    }
    return to
  }
}
