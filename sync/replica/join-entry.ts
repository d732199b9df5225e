import { LIMITS } from '../core/limits.ts'
import type { Change } from '../dag/change.ts'
import type { AclRecord } from '../acl/records.ts'
import type { JoinStatus } from '../acl/requests.ts'
import type { AclLog } from '../acl/state.ts'

/**
 * The checks of the join entry (`SpaceReplica.ingestJoin`), run inside the replica's serial
 * queue so that two joins arriving together cannot both take the last pending slot. Returns
 * `admit` (ingest it), a status to answer without writing anything, or undefined (refuse,
 * indistinguishable for the sender from a space we do not hold).
 */
export function joinGate(acl: AclLog, me: string, c: Change, record: AclRecord, from: string): JoinStatus | 'admit' | undefined {
  if (c.author !== from || c.spaceId !== acl.spaceId || c.treeId !== acl.spaceId) return undefined
  if (record.type !== 'join' && record.type !== 'cancel') return undefined
  const st = acl.current()
  // A removed member's stale copy is no place to ask: only a replica that may read answers.
  if (!acl.has(acl.spaceId) || !st.canRead(me)) return undefined
  if (acl.has(c.id)) return st.requestStatus(record.type === 'cancel' ? record.request : c.id)
  if (record.type === 'cancel') {
    const join = acl.entries.get(record.request)
    if (join?.record.type !== 'join' || join.author !== from) return undefined
    // Only a pending request is withdrawn: a second cancel, or one after the decision, writes nothing.
    const status = st.requestStatus(record.request)
    return status === 'pending' ? 'admit' : status
  }
  if (!st.invites().some((i) => i.recordId === record.invite)) return undefined
  const requests = st.requests()
  // One pending request per joiner: asking again (say with a fresh timestamp) writes nothing.
  if (requests.some((q) => q.joiner === from && q.status === 'pending')) return 'pending'
  // A member asking again gets no new request: it already is what an accept would make it.
  if (st.canRead(from)) return undefined
  // Join, cancel, join again...: each round is two records kept for good, so one joiner gets a few.
  let mine = 0
  for (const q of requests) if (q.joiner === from) mine++
  if (mine >= LIMITS.maxJoinRequestsPerJoiner) return undefined
  // Requests through invites still live: revoking a leaked invite frees room for the others.
  const live = new Set(st.invites().map((i) => i.recordId))
  let pending = 0
  for (const q of requests) if (q.status === 'pending' && live.has(q.invite)) pending++
  return pending < LIMITS.maxPendingJoinRequests ? 'admit' : undefined
}
