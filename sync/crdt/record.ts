import type { Json } from './ops.ts'
import { canonical, coversPath, deepEqual, getPath, withPath } from './path.ts'
import { applyRuled } from './ruled-record.ts'
import { foldYtext } from './ytext-fold.ts'
import { liveFields, overlayTexts, type YTextMap } from './ytext.ts'

/**
 * Position of an op in the one total order every peer agrees on: (lamport, changeId, index in
 * the change). Folding a record's ops in this order defines its state, whatever order they
 * arrived in.
 */
export interface Stamp {
  l: number
  c: string
  i: number
}

export function compareStamps(a: Stamp, b: Stamp): number {
  return a.l - b.l || (a.c < b.c ? -1 : a.c > b.c ? 1 : 0) || a.i - b.i
}

/** Who wrote a change and when, carried with stamps that surface as createdAt/modifiedAt. */
export interface StampInfo extends Stamp {
  a: string
  t: number
  /** The change's trace ids, when it carried some (surface as `_traces` of the record it last modified). */
  tr?: string[]
}

export type LogEntry = { s: Stamp; k: 'set'; p: string; v: Json } | { s: Stamp; k: 'unset'; p: string }

/**
 * A record as merge keeps it. `log` holds the ops that can still matter if an earlier-stamped
 * op arrives late: an op stops mattering once a later applied `set` on the same or an ancestor
 * path covers it (and no pinned path is involved, since a pinned conflict can flip which ops
 * apply). `created`/`modified` are the min/max stamps over every op ever seen for the record,
 * dropped ones included, so they do not depend on arrival order either.
 */
export interface RecordState {
  value: Json | undefined
  deleted?: StampInfo
  created: StampInfo
  modified: StampInfo
  log: LogEntry[]
  /** Datasets with a write rule: the op the rule accepted as the record's create (ruled-record.ts). */
  first?: StampInfo
  /** Datasets with a write rule, until the create is known: ops the rule could not accept yet, in stamp order. */
  pending?: PendingOp[]
  /** Text paths (ytext.ts): per path, the merged Yjs state and its newest update's stamp. */
  yt?: YTextMap
}

/** An op merge folds into a record. */
export type MergeOp = { k: 'set'; p: string; v: Json } | { k: 'unset'; p: string } | { k: 'delete' } | { k: 'ytext'; p: string; u: string; salt: string }

/** An op a write rule refused while the record's create was unknown (it may be accepted once the create arrives). */
export interface PendingOp {
  s: StampInfo
  op: MergeOp
}

/**
 * What a write rule judges: one op, who signed its change, the record it targets, and the
 * record's creator (the stamp of the op the rule accepted first, undefined before). Contract
 * (what keeps the fold independent of arrival order and of log pruning): the rule is pure; it
 * accepts at most one op of a record with `creator` undefined (the create); and its verdict on a
 * later op depends only on these inputs, never on the record's value.
 */
export interface WriteRuleInput {
  op: MergeOp
  signer: string
  changeId: string
  recordId: string
  creator: StampInfo | undefined
}

export type WriteRule = (input: WriteRuleInput) => boolean

/** Schema facts merge needs: paths that are first-write-wins for a dataset, and its write rule. */
export interface MergePolicy {
  pinnedPaths(ds: string): readonly string[]
  /** Who may write what in a dataset, judged op by op in stamp order on every peer (refused ops are dropped). */
  writeRule?(ds: string): WriteRule | undefined
}

export const noPins: MergePolicy = { pinnedPaths: () => [] }

/**
 * `refold`: the op changes which op is a ruled record's create (ruled-record.ts); the state is
 * unchanged and the caller must fold the record's ops again in stamp order.
 */
export type ApplyOutcome = 'applied' | 'dropped_pinned' | 'dropped_rule' | 'dropped_invalid' | 'ignored_deleted' | 'refold'

export const minInfo = (a: StampInfo, b: StampInfo) => (compareStamps(a, b) <= 0 ? a : b)
export const maxInfo = (a: StampInfo, b: StampInfo) => (compareStamps(a, b) >= 0 ? a : b)

/** Would this op change a pinned path that already holds a value? Then it is dropped. */
function violatesPin(doc: Json | undefined, e: LogEntry, pins: readonly string[]): boolean {
  for (const pin of pins) {
    const cur = getPath(doc, pin)
    if (cur === undefined) continue
    if (coversPath(e.p, pin)) {
      const rel = e.p === '' ? pin : pin.slice(e.p.length + 1)
      const next = e.k === 'set' ? (rel === pin && e.p !== '' ? e.v : getPath(e.v, e.p === '' ? pin : rel)) : undefined
      if (!deepEqual(next, cur)) return true
    } else if (coversPath(pin, e.p)) {
      const rel = e.p.slice(pin.length + 1)
      const next = withPath(cur, rel, e.k === 'set' ? e.v : undefined)
      if (!deepEqual(next, cur)) return true
    }
  }
  return false
}

export function touchesPin(path: string, pins: readonly string[]): boolean {
  for (const pin of pins) if (coversPath(path, pin) || coversPath(pin, path)) return true
  return false
}

function applyEntry(doc: Json | undefined, e: LogEntry, pins: readonly string[]): { doc: Json | undefined; ok: boolean } {
  if (pins.length > 0 && violatesPin(doc, e, pins)) return { doc, ok: false }
  return { doc: withPath(doc, e.p, e.k === 'set' ? canonical(e.v) : undefined), ok: true }
}

/** Drops log entries a later applied, pin-free `set` covers; they can never matter again. */
function prune(log: LogEntry[], pins: readonly string[]): LogEntry[] {
  if (log.length === 1) return log
  const out: LogEntry[] = []
  const covering: string[] = []
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i]
    if (covering.some((p) => coversPath(p, e.p))) continue
    out.push(e)
    if (e.k === 'set' && !touchesPin(e.p, pins)) covering.push(e.p)
  }
  return out.reverse()
}

export function newRecordState(info: StampInfo): RecordState {
  return { value: undefined, created: info, modified: info, log: [] }
}

/**
 * Applies one op to a record. In-order arrival (the common case) applies it on top; a late op
 * re-folds the live log, which yields exactly the state of folding every op in stamp order.
 * With a write rule (`ruled`), the rule judges each op first (ruled-record.ts).
 */
export function applyToRecord(
  state: RecordState | undefined,
  info: StampInfo,
  op: MergeOp,
  pins: readonly string[],
  ruled?: { rule: WriteRule; recordId: string },
): { state: RecordState; outcome: ApplyOutcome } {
  if (ruled) return applyRuled(state, info, op, pins, ruled.rule, ruled.recordId)
  const st: RecordState = state ? { ...state, created: minInfo(state.created, info), modified: maxInfo(state.modified, info) } : newRecordState(info)
  return mergeInto(st, info, op, pins)
}

/** Folds one op into `st` (already a copy whose created/modified the caller settled). */
export function mergeInto(st: RecordState, info: StampInfo, op: MergeOp, pins: readonly string[]): { state: RecordState; outcome: ApplyOutcome } {
  if (st.deleted) {
    if (op.k === 'delete') st.deleted = minInfo(st.deleted, info)
    return { state: st, outcome: 'ignored_deleted' }
  }
  if (op.k === 'delete') {
    return { state: { value: undefined, deleted: info, created: st.created, modified: st.modified, log: [], ...(st.first ? { first: st.first } : {}) }, outcome: 'applied' }
  }
  const stamp: Stamp = { l: info.l, c: info.c, i: info.i }
  if (op.k === 'ytext') return foldYtext(st, info, op, pins)
  const entry: LogEntry = op.k === 'set' ? { s: stamp, k: 'set', p: op.p, v: op.v } : { s: stamp, k: 'unset', p: op.p }
  const last = st.log[st.log.length - 1]
  if (!last || compareStamps(last.s, stamp) < 0) {
    const r = applyEntry(st.value, entry, pins)
    // A dropped op stays in the log: an earlier op arriving later can make it apply after all
    // (a whole-record set whose pinned value then matches).
    const log = [...st.log, entry]
    st.value = st.yt ? overlayTexts(r.doc, log, (st.yt = liveFields(st.yt))) : r.doc
    st.log = prune(log, pins)
    return { state: st, outcome: r.ok ? 'applied' : 'dropped_pinned' }
  }
  // Late arrival: insert in stamp order and fold again from nothing.
  let at = st.log.length
  while (at > 0 && compareStamps(st.log[at - 1].s, stamp) > 0) at--
  if (at > 0 && compareStamps(st.log[at - 1].s, stamp) === 0) return { state: st, outcome: 'applied' }
  const log = [...st.log.slice(0, at), entry, ...st.log.slice(at)]
  let doc: Json | undefined
  let ok = true
  for (const e of log) {
    const r = applyEntry(doc, e, pins)
    doc = r.doc
    if (!r.ok && e === entry) ok = false
  }
  st.value = st.yt ? overlayTexts(doc, log, (st.yt = liveFields(st.yt))) : doc
  st.log = prune(log, pins)
  return { state: st, outcome: ok ? 'applied' : 'dropped_pinned' }
}
