import type { Op } from './ops.ts'
import { touchesPin, type ApplyOutcome, type MergeOp, type RecordState, type Stamp, type StampInfo } from './record.ts'
import { checkUpdate, clientIdFor, fromB64, liveFields, overlayTexts, YTextField } from './ytext.ts'
import { takeWrittenDoc } from './ytext-written-docs.ts'

/**
 * Folds a `ytext` op into `st` (a copy whose created/modified the caller settled). The update
 * joins the path's Yjs state whatever its stamp (Yjs merge is commutative and idempotent);
 * the stamp only decides, against `set`/`unset` on the path or an ancestor, which one the
 * value shows (ytext.ts). A pinned path cannot be a text, and an update that is not its
 * writer's own (checkUpdate) is dropped, the same on every peer.
 */
export function foldYtext(st: RecordState, info: StampInfo, op: { p: string; u: string; salt: string }, pins: readonly string[]): { state: RecordState; outcome: ApplyOutcome } {
  if (pins.length > 0 && touchesPin(op.p, pins)) return { state: st, outcome: 'dropped_pinned' }
  const bytes = fromB64(op.u)
  if (!checkUpdate(bytes, clientIdFor(info.a, op.salt))) return { state: st, outcome: 'dropped_invalid' }
  const stamp: Stamp = { l: info.l, c: info.c, i: info.i }
  const yt = st.yt ? liveFields(st.yt) : {}
  let field: YTextField
  if (Object.prototype.hasOwnProperty.call(yt, op.p)) (field = yt[op.p]).absorb(bytes, stamp, op.u)
  else {
    const written = takeWrittenDoc(op.u)
    if (written) field = yt[op.p] = YTextField.holding(stamp, written)
    else (field = yt[op.p] = new YTextField(stamp, undefined)).absorb(bytes, stamp)
  }
  field.noteFolded(op.u)
  st.yt = yt
  st.value = overlayTexts(st.value, st.log, yt, op.p)
  return { state: st, outcome: 'applied' }
}

/** The merge op of a stored op (every kind but `deleteObject`, which merge handles per tree). */
export function mergeOpOf(op: Exclude<Op, { op: 'deleteObject' }>): MergeOp {
  switch (op.op) {
    case 'set':
      return { k: 'set', p: op.path, v: op.value }
    case 'unset':
      return { k: 'unset', p: op.path }
    case 'ytext':
      return { k: 'ytext', p: op.path, u: op.update, salt: op.salt }
    default:
      return { k: 'delete' }
  }
}
