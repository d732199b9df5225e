import { EVENTS } from '../core/events-limits.ts'
import type { Aead } from '../crypto/aead.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { isFullMember } from '../replica/full-membership.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import { BoundedMap } from './bounded-map.ts'
import { decodeEventFrame, MalformedEvent, openEventBody, verifyEventFrame, type EventBody, type WireScope } from './events-wire.ts'
import { PEER_LIMITS } from './limits.ts'
import { RateBuckets } from './rate-buckets.ts'

/** Why a peer's event was dropped (counted; nothing is ever answered). */
export type EventDrop =
  'rate' | 'unauthenticated' | 'malformed' | 'signer_mismatch' | 'stale' | 'duplicate' | 'unknown_space' | 'not_member' | 'no_key' | 'bad_signature' | 'bad_payload' | 'refused'

export interface ReceivedEvent {
  scope: WireScope
  /** The space of a space event; for an account event, the tech space it was sealed in. */
  spaceId: string
  body: EventBody
  /** The signer: `sender.identity`. */
  identity: string
}

export interface EventsReceiverHost {
  readonly accountId: string
  readonly techSpaceId: string
  /** The replica of a space we hold (the tech space included), or undefined. */
  replica(spaceId: string): SpaceReplica | undefined
  /** Last word on the opened body (grammar, budget, self-owned namespaces); false drops it. */
  accept(body: EventBody, scope: WireScope, signer: string): boolean
  /**
   * Peers that relay other accounts' events to us: our hubs (docs/hub.md "Live traffic"). Their
   * frames may be signed by any member; each signer gets the rate a direct peer gets.
   */
  relay?(peer: string): boolean
}

/**
 * What a daemon does with an event frame a peer sent, as one pure step (bytes and the peer's
 * proved account in, an event to deliver or a drop reason out). Cheap refusals first: the
 * peer's rate (publishBurst, then 30/s), a link with no proved account, the frame's shape, a
 * signer other than the link's account (only our hubs relay another's events, so a member cannot
 * replay someone else's; a hub's frames are held to each signer's rate), a clock far off, an id already delivered; then membership (an
 * account event only from our own account, a space event only from a full member of a space
 * where we are one too), the key, the signature, the seal and the body. Every table is
 * bounded: rate buckets and the dedupe ids are LRU.
 */
export class EventsReceiver {
  private readonly rates: RateBuckets
  private readonly seen: BoundedMap<string, true>
  readonly drops: Partial<Record<EventDrop, number>> = {}

  constructor(
    private readonly host: EventsReceiverHost,
    private readonly crypto: CryptoProvider,
    private readonly now: () => number,
    private readonly aead?: Aead,
    /** Tests shrink the dedupe table. */
    dedupeIds: number = EVENTS.dedupeIds,
  ) {
    this.seen = new BoundedMap(dedupeIds)
    this.rates = new RateBuckets(EVENTS.publishBurst, EVENTS.publishRefillMs, PEER_LIMITS.maxPeerCounters, now)
  }

  async receive(peer: string, peerIdentity: string | undefined, bytes: Uint8Array): Promise<ReceivedEvent | EventDrop> {
    const r = await this.judge(peer, peerIdentity, bytes)
    if (typeof r === 'string') this.drops[r] = (this.drops[r] ?? 0) + 1
    return r
  }

  private async judge(peer: string, peerIdentity: string | undefined, bytes: Uint8Array): Promise<ReceivedEvent | EventDrop> {
    const relay = this.host.relay?.(peer) === true
    if (!relay && !this.rates.take(peer)) return 'rate'
    if (peerIdentity === undefined) return 'unauthenticated'
    if (bytes.length > EVENTS.maxFrameBytes) return 'malformed'
    let f
    try {
      f = decodeEventFrame(bytes)
    } catch (err) {
      if (err instanceof MalformedEvent) return 'malformed'
      throw err
    }
    if (relay) {
      // A relay forwards many members' events: each signer is held to one peer's rate.
      if (!this.rates.take(`signer/${f.signer}`)) return 'rate'
    } else if (f.signer !== peerIdentity) return 'signer_mismatch'
    if (Math.abs(this.now() - f.timestamp) > EVENTS.maxClockSkewMs) return 'stale'
    const dedupeKey = `${f.signer}/${f.eventId}`
    if (this.seen.has(dedupeKey)) return 'duplicate'
    const replica =
      f.scope === 'account'
        ? f.spaceId === this.host.techSpaceId
          ? this.host.replica(f.spaceId)
          : undefined
        : f.spaceId === this.host.techSpaceId
          ? undefined
          : this.host.replica(f.spaceId)
    if (!replica) return 'unknown_space'
    if (f.scope === 'account' ? f.signer !== this.host.accountId : !isFullMember(replica, f.signer) || !isFullMember(replica, this.host.accountId)) return 'not_member'
    const key = replica.keyring.get(f.readKeyId)
    if (!key) return 'no_key'
    if (!(await verifyEventFrame(f, this.crypto))) return 'bad_signature'
    let body: EventBody
    try {
      body = openEventBody(f, key, this.aead)
    } catch {
      return 'bad_payload'
    }
    if (!this.host.accept(body, f.scope, f.signer)) return 'refused'
    // Only a verified event takes a dedupe slot: nobody can evict others' ids with forgeries.
    if (this.seen.has(dedupeKey)) return 'duplicate'
    this.seen.set(dedupeKey, true)
    return { scope: f.scope, spaceId: f.spaceId, body, identity: f.signer }
  }
}
