import { createHash } from 'node:crypto'
import type { PushPlatform } from '../../sync/protocol/push-wire.ts'

/** Deliveries a caller takes at once, per platform (a platform absent takes none). */
export type ClaimLimits = Partial<Record<PushPlatform, number>>

/** Where a forwarded payload goes: a provider and its device token (or endpoint). */
export interface PushTarget {
  platform: PushPlatform
  token: string
}

/** Who set a registration and when: the per-peer cap and the idle eviction read them. */
export interface RegistrationMeta {
  peer?: string
  /** ms since the epoch (the node's clock). */
  at?: number
}

/** One (space key, token) registration as the node holds it. */
export interface Registration {
  peer: string
  topics: number
  updatedAt: number
}

/** A delivery taken from the queue: its attempt number (this one included) and the message as queued. */
export interface ClaimedDelivery {
  id: number
  target: PushTarget
  /** The provider message, JSON (as `enqueue` got it). */
  message: string
  attempts: number
}

export interface QueueStats {
  /** Deliveries waiting (due or not) or in flight. */
  depth: number
  /** Of those, due now. */
  due: number
}

/**
 * The push node's state: registrations, (space key, topic) to (platform, token), and the
 * delivery queue. One interface, two stores: SQLite for one process (the default, a file),
 * PostgreSQL for several push-node processes behind one address, which then serve every
 * subscription whichever process took it and share one queue. Every store passes the
 * conformance suite (store-conformance.ts).
 */
export interface SubscriptionStore {
  readonly kind: string
  /**
   * Replaces the topics a token holds under a space key (an empty list drops the registration),
   * recording who set it and when (`meta.at` renews an idle registration).
   */
  setTopics(spaceKey: string, target: PushTarget, topics: readonly string[], meta?: RegistrationMeta): Promise<void>
  /** Drops a token under every space key, and its queued deliveries; answers how many subscriptions went. */
  removeToken(target: PushTarget): Promise<number>
  /** The distinct targets subscribed to any of these topics of a space key. */
  targetsFor(spaceKey: string, topics: readonly string[]): Promise<PushTarget[]>
  /** The topics a token holds under a space key, sorted. */
  topicsOf(spaceKey: string, target: PushTarget): Promise<string[]>
  /** The registration of a token under a space key, if any. */
  registrationOf(spaceKey: string, target: PushTarget): Promise<Registration | undefined>
  /** How many distinct tokens hold topics under a space key (the per-space bound). */
  tokenCount(spaceKey: string): Promise<number>
  /** Subscriptions (topic rows) held by registrations a peer last set, and by everyone. */
  usage(peer: string): Promise<{ peer: number; total: number }>
  /** Drops registrations last set before `before`; answers how many went. */
  evictIdle(before: number): Promise<number>
  /** Totals for the health endpoint. */
  totals(): Promise<{ subscriptions: number; spaceKeys: number }>

  /**
   * Queues one message for each target, due at `now`; nothing when that would take the queue
   * past `maxDepth`. The first ones of each platform, up to `claim.limits`, come back already
   * claimed (as `claimDue` would: an attempt counted, hidden until `claim.leaseUntil`), so the
   * process that queued a send starts its first attempts without another round trip. Answers how
   * many were queued (0 or `targets.length`) and the claimed ones.
   */
  enqueue(
    message: string,
    targets: readonly PushTarget[],
    now: number,
    maxDepth: number,
    claim?: { limits: ClaimLimits; leaseUntil: number },
  ): Promise<{ queued: number; claimed: ClaimedDelivery[] }>
  /**
   * Takes up to `limit` deliveries due at `now`, oldest first, counting an attempt on each and
   * hiding them until `leaseUntil`: a process that dies mid-attempt leaves them due again then.
   * Two processes never take the same delivery while its lease runs. `platform`: only its deliveries.
   */
  claimDue(now: number, limit: number, leaseUntil: number, platform?: PushPlatform): Promise<ClaimedDelivery[]>
  /** A delivery is done (delivered, given up, or its token gone). */
  finish(id: number): Promise<void>
  /** A delivery to try again at `dueAt`. */
  retryAt(id: number, dueAt: number): Promise<void>
  /** The earliest due time of any queued delivery. */
  nextDueAt(): Promise<number | undefined>
  queueStats(now: number): Promise<QueueStats>
  close(): Promise<void>
}

/**
 * Tokens are looked up and made unique by their SHA-256 (hex), so the 4 KiB a token may take
 * is stored once per registration, never again in an index or per topic.
 */
export const tokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex')
