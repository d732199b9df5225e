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
 */
export class RemovalNotices {
  private readonly budget: RateBuckets
  /** Per link: the spaces noticed on it. */
  private readonly noticed = new BoundedMap<string, Set<string>>(PEER_LIMITS.maxPeerCounters)

  constructor(now: () => number) {
    this.budget = new RateBuckets(NOTICE_LIMITS.noticeBurst, NOTICE_LIMITS.noticeRefillMs, PEER_LIMITS.maxPeerCounters, now)
  }

  /**
   * The records to send `identity` on link `peer` about `r`, or undefined to refuse as usual.
   * Charges the budgets only when a notice goes out.
   */
  plan(r: SpaceReplica, peer: string, identity: string): ChangePlan | undefined {
    const removal = latestRemoval(r, identity)
    if (!removal) return undefined
    let seen = this.noticed.get(peer)
    if (seen && (seen.has(r.spaceId) || seen.size >= NOTICE_LIMITS.maxNoticedSpacesPerLink)) return undefined
    if (!this.budget.take(identity)) return undefined
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
