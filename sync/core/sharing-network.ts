/**
 * What the network offers the account engine for sharing between accounts (issue 13,
 * docs/protocol.md "Joining" and "Offers"): a port, like `Env`, that the daemon fills in. It
 * builds one over its P2P side (sync/protocol/sharing-wire.ts) and hands it to
 * `AccountEngine.attachNetwork`; nothing in sync/ needs a network to run, so an engine without
 * one (tests, the simulator) simply never joins over the wire nor hears offers. It lives in
 * core so that both the account engine (sync/space) and head sync (sync/protocol) see it.
 */

/**
 * The status a device holding a space reports for a join request (`joined` message): the same
 * values as the ACL fold's request status (sync/acl/requests.ts).
 */
export type JoinStatus = 'pending' | 'accepted' | 'declined' | 'cancelled'

/** A `joined` answer to one of our joins. */
export interface JoinStatusEvent {
  spaceId: string
  status: JoinStatus
  /**
   * The account of the device that answered. The status is that device's claim: `accepted` is
   * checked by syncing the space (we read it only if the ACL really lists us); a `declined` or
   * `cancelled` from a device that is no manager of the space is not evidence of anything.
   */
  identity: string
  /** Its transport peer id. */
  peer: string
}

/** An authenticated account opened an exchange about a space this device does not hold. */
export interface Offer {
  spaceId: string
  /** The account that opened it (proved on the link). */
  identity: string
  /** Its device's transport peer id (for `syncWith`). */
  peer: string
}

export interface SharingNetwork {
  /**
   * Sends `change` (the raw signed `join` or `cancel` ACL change, authored by this account) to
   * every authenticated peer, again with exponential backoff, and to every peer that
   * authenticates later, until `stopJoin`. Calling it again for the same space replaces the
   * change (a cancel after a join). At most JOIN_LIMITS.maxActiveJoins spaces at once: past it
   * the one asked least recently stops.
   */
  join(spaceId: string, change: Uint8Array): void
  /** Stops repeating the join of a space (accepted and opened, or given up). */
  stopJoin(spaceId: string): void
  /** Spaces whose join is being repeated. */
  joining(): string[]
  /** Every status answer to our joins; returns the function that stops listening. */
  onJoinStatus(fn: (e: JoinStatusEvent) => void): () => void
  /**
   * The handler of offers. At most OFFER_LIMITS.maxInFlight of its promises run at once (fewer
   * per offering account); offers past that are dropped (the offering device asks again at its
   * next round). The answer the offering device got is the one for a space we do not hold,
   * whatever the handler does. One handler: setting another replaces it.
   */
  onOffer(fn: (o: Offer) => Promise<void>): () => void
  /**
   * One head-sync round about a held space with one peer (authenticating the link first).
   * A space opened with no ACL yet (`AccountEngine.adopt`-like) learns its ACL this way from a
   * device that holds us to be a reader there. True when the round ended in sync or synced.
   */
  syncWith(spaceId: string, peer: string): Promise<boolean>
}
