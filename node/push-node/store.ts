import type { PushPlatform } from '../../sync/protocol/push-wire.ts'

/** Where a forwarded payload goes: a provider and its device token (or endpoint). */
export interface PushTarget {
  platform: PushPlatform
  token: string
}

/**
 * The push node's subscriptions: (space key, topic) to (platform, token). One interface, two
 * stores: SQLite for one process (the default), PostgreSQL for several push-node processes
 * behind one address, which then serve every subscription whichever process took it. Every
 * store passes the conformance suite (store-conformance.ts).
 */
export interface SubscriptionStore {
  readonly kind: string
  /** Replaces the topics a token holds under a space key (an empty list drops them all). */
  setTopics(spaceKey: string, target: PushTarget, topics: readonly string[]): Promise<void>
  /** Drops a token under every space key; answers how many subscriptions went. */
  removeToken(target: PushTarget): Promise<number>
  /** The distinct targets subscribed to any of these topics of a space key. */
  targetsFor(spaceKey: string, topics: readonly string[]): Promise<PushTarget[]>
  /** The topics a token holds under a space key, sorted. */
  topicsOf(spaceKey: string, target: PushTarget): Promise<string[]>
  /** How many distinct tokens hold topics under a space key (the per-space bound). */
  tokenCount(spaceKey: string): Promise<number>
  /** Totals for the health endpoint. */
  totals(): Promise<{ subscriptions: number; spaceKeys: number }>
  close(): Promise<void>
}
