import type { SpaceReplica } from '../replica/space-replica.ts'
import { BoundedMap } from './bounded-map.ts'
import { NOTICE_LIMITS, PEER_LIMITS } from './limits.ts'
import { RateBuckets } from './rate-buckets.ts'
import { ChangePlan } from './tree-diff.ts'

/**
 * The removal notice (docs/protocol.md, "Removal notice"). Rounds run only with readers, so
 * without it nothing would ever carry a member's removal to the removed device: it would keep
 * its row active and keep asking. When an account whose removal takes effect in our ACL opens
 * an exchange about the space, its refusal is followed by the ACL records in the causal past of
 * its latest effective removal, the removal included, and nothing else. Every one of them is a
 * record it held or could have held as a member, but for the removal itself: the notice tells
 * it nothing but the fact of its removal. Everyone else we refuse (never a member, re-notified
 * on the same link, out of budget) gets the refusal unchanged.
 *
 * Bounded: one notice per space per link (an epoch of the link; a new link starts afresh), at
 * most maxNoticedSpacesPerLink spaces per link, and per account a token bucket (noticeBurst,
 * then one per noticeRefillMs) that new links do not refill.
 *
 * A peer we admitted on this link (an exchange about the space ran with it as a reader) is not
 * left to ask: once its removal takes effect here, the scheduler's next round about the space
 * (a commit's, within a second of it) sends it the notice unasked (`push`), charged to no
 * bucket, since it comes once per link and space, when we, not the peer, decide. Only a peer
 * that asks gets the bucket, so what a removed account can draw by opening new links is bounded
 * as before, while a member just removed while connected learns it at once.
 */
export class RemovalNotices {
  private readonly budget: RateBuckets
  /** Per link: the spaces noticed on it. */
  private readonly noticed = new BoundedMap<string, Set<string>>(PEER_LIMITS.maxPeerCounters)
  /** Per link: spaces an exchange ran about with the peer as a reader (at most maxNoticedSpacesPerLink). */
  private readonly admitted = new BoundedMap<string, Set<string>>(PEER_LIMITS.maxPeerCounters)

  constructor(now: () => number) {
    this.budget = new RateBuckets(NOTICE_LIMITS.noticeBurst, NOTICE_LIMITS.noticeRefillMs, PEER_LIMITS.maxPeerCounters, now)
  }

  /**
   * The records to send `identity` on link `peer` about `r`, or undefined to refuse as usual.
   * Charges the budgets only when a notice goes out.
   */
  plan(r: SpaceReplica, peer: string, identity: string): ChangePlan | undefined {
    const removal = latestRemoval(r, identity)
    if (!removal || !this.mayNotice(peer, r.spaceId) || !this.budget.take(identity)) return undefined
    return this.notice(r, peer, removal)
  }

  /** The peer's account read the space on this link: a later removal is pushed to it (`push`). */
  admit(peer: string, spaceId: string) {
    let spaces = this.admitted.get(peer)
    if (!spaces) this.admitted.set(peer, (spaces = new Set()))
    if (spaces.size < NOTICE_LIMITS.maxNoticedSpacesPerLink) spaces.add(spaceId)
    // A reader again (added back): a later removal is news again on this link.
    this.noticed.get(peer)?.delete(spaceId)
  }

  /**
   * The records to send unasked to `identity` on link `peer` about `r`: only when the link was
   * admitted to the space and the account's removal now takes effect here, once per link.
   */
  push(r: SpaceReplica, peer: string, identity: string): ChangePlan | undefined {
    const spaces = this.admitted.get(peer)
    if (!spaces?.has(r.spaceId)) return undefined
    const removal = latestRemoval(r, identity)
    if (!removal) return undefined
    spaces.delete(r.spaceId)
    return this.mayNotice(peer, r.spaceId) ? this.notice(r, peer, removal) : undefined
  }

  private mayNotice(peer: string, spaceId: string): boolean {
    const seen = this.noticed.get(peer)
    return !seen || (!seen.has(spaceId) && seen.size < NOTICE_LIMITS.maxNoticedSpacesPerLink)
  }

  private notice(r: SpaceReplica, peer: string, removal: string): ChangePlan {
    let seen = this.noticed.get(peer)
    if (!seen) this.noticed.set(peer, (seen = new Set()))
    seen.add(r.spaceId)
    // Parents before children: (lamport, id) order is a topological order of the ACL DAG.
    const past = r.acl.history([removal]).sort((a, b) => a.lamport - b.lamport || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    const plan = new ChangePlan(r.spaceId)
    plan.add(
      r.spaceId,
      past.map((e) => e.id),
    )
    return plan
  }

  /** The link went down: its next epoch may be noticed again (the account's bucket stays). */
  forget(peer: string) {
    this.noticed.delete(peer)
    this.admitted.delete(peer)
  }
}

/**
 * The record id of `identity`'s latest effective removal from `r`, when it may not read there
 * now (a member removed and added again is no longer removed); else undefined.
 */
export function latestRemoval(r: SpaceReplica, identity: string): string | undefined {
  if (!r.known) return undefined
  const st = r.acl.current()
  if (st.canRead(identity)) return undefined
  const list = st.removals.get(identity)
  return list?.length ? list[list.length - 1].id : undefined
}
