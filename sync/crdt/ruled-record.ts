import {
  compareStamps,
  maxInfo,
  mergeInto,
  minInfo,
  newRecordState,
  type ApplyOutcome,
  type MergeOp,
  type PendingOp,
  type RecordState,
  type StampInfo,
  type WriteRule,
} from './record.ts'

/**
 * The fold of a dataset with a write rule (MergePolicy.writeRule): the rule judges every op
 * with the record's creator as it stands at that op's stamp, and a refused op is dropped the
 * way a pinned conflict is, on every peer. Why the result never depends on arrival order:
 *
 * - The creator is the op the rule accepted with no creator yet (the create). Before it is
 *   known, nothing can be accepted but a create, so refused ops wait in `pending` (in stamp
 *   order); when the create arrives, those stamped after it are judged again, in order, and the
 *   rest are dropped for good. The log holds accepted ops only, so log pruning (a later set
 *   covering an earlier one) never loses an op that could still flip.
 * - Once the create is known, an op stamped before it that the rule would not accept as a
 *   create is refused (a concurrent forgery with a low lamport cannot pre-empt the create),
 *   and a later op's verdict depends only on the op, its signer and the creator (the rule's
 *   contract), so it is final when it is first judged.
 * - An op stamped before the create that the rule would accept as a create (two accounts
 *   creating one record id concurrently, under a rule that lets anyone create) is the record's
 *   real create: in stamp order it comes first. The fold here cannot re-judge what it already
 *   judged under the other creator (the log is pruned and holds no signers), so it answers
 *   `refold` and leaves the state as it was; the replica then folds the record's tree again
 *   from its changes in stamp order (apply-batch.ts, rebuildTree), where the lowest create
 *   comes first and no refold arises. Every peer thus ends with the lowest-stamped create as
 *   the creator, whatever the arrival order. A rule whose create is bound to one change (chat:
 *   the record id derives from the change id) never refolds.
 * - `created` is the create's stamp and `modified` the newest accepted op's, so `_ver.id` and
 *   the instants never come from a refused op. Until the create is known they are the min/max
 *   over every op seen (the record is invisible then: it has no value).
 */
export function applyRuled(
  state: RecordState | undefined,
  info: StampInfo,
  op: MergeOp,
  pins: readonly string[],
  rule: WriteRule,
  recordId: string,
): { state: RecordState; outcome: ApplyOutcome } {
  const judge = (s: StampInfo, o: MergeOp, creator: StampInfo | undefined) => rule({ op: o, signer: s.a, changeId: s.c, recordId, creator })
  if (state?.first) {
    const st: RecordState = { ...state }
    const first = st.first!
    const order = compareStamps(first, info)
    // Stamped before the create and a create itself: in stamp order this op is the record's
    // create, and every op judged since was judged under the wrong creator. Only a fold of the
    // record's ops in stamp order can say what stands (the caller re-folds).
    if (order > 0 && judge(info, op, undefined)) return { state: st, outcome: 'refold' }
    if (order >= 0 || !judge(info, op, first)) return { state: st, outcome: 'dropped_rule' }
    st.modified = maxInfo(st.modified, info)
    return mergeInto(st, info, op, pins)
  }
  const st: RecordState = state ? { ...state, created: minInfo(state.created, info), modified: maxInfo(state.modified, info) } : newRecordState(info)
  if (!judge(info, op, undefined)) {
    st.pending = withPending(st.pending ?? [], { s: info, op })
    return { state: st, outcome: 'dropped_rule' }
  }
  // The create: what waited for it is judged again, in stamp order, now that the creator is known.
  const waiting = st.pending ?? []
  delete st.pending
  st.first = info
  st.created = info
  st.modified = info
  const result = mergeInto(st, info, op, pins)
  let cur = result.state
  for (const p of waiting) {
    if (compareStamps(p.s, info) <= 0 || !judge(p.s, p.op, info)) continue
    cur.modified = maxInfo(cur.modified, p.s)
    cur = mergeInto(cur, p.s, p.op, pins).state
  }
  return { state: cur, outcome: result.outcome }
}

/** Inserts in stamp order (a duplicate stamp is the same op delivered again). */
function withPending(list: readonly PendingOp[], p: PendingOp): PendingOp[] {
  let at = list.length
  while (at > 0 && compareStamps(list[at - 1].s, p.s) > 0) at--
  if (at > 0 && compareStamps(list[at - 1].s, p.s) === 0) return [...list]
  return [...list.slice(0, at), p, ...list.slice(at)]
}
