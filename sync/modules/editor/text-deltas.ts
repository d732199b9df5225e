import type { Op } from '../../crdt/ops.ts'
import { getPath } from '../../crdt/path.ts'
import { clientIdFor, YTextField } from '../../crdt/ytext.ts'
import { ownTextUpdates } from '../../crdt/ytext-own-update.ts'
import type { SpaceEngine } from '../../space/space-engine.ts'

/** The block field that is a text (sync/crdt/ytext.ts): concurrent edits of it merge character by character. */
export const TEXT_FIELD = 'text'

/**
 * Rewrites each `set` of an existing block's `text` as a `ytext` op: the minimal character diff
 * (fast-diff) from the block's current text to the new one, as a Yjs update on that block's
 * text, so a concurrent edit of the same paragraph elsewhere keeps both. A set that changes
 * nothing is dropped. Inserts (whole-block sets) stay sets: a new block's text is its first
 * value, and the first edit seeds it (ytext.ts, textUpdate). An edit past the peers' bound on
 * one update goes out as several ytext ops in order, or, when the text's seed alone is past it,
 * as the plain set (ytext-split-update.ts).
 *
 * The caller serializes its writes (EditorService's queue) so two updates under this writer's
 * client id never start from the same Yjs state.
 */
export async function withTextDeltas(space: SpaceEngine, objectId: string, ops: readonly Op[], salt: string): Promise<Op[]> {
  const out: Op[] = []
  const client = clientIdFor(space.replica.me, salt)
  for (const op of ops) {
    if (op.op !== 'set' || op.path !== TEXT_FIELD || typeof op.value !== 'string') {
      out.push(op)
      continue
    }
    const rec = await space.replica.getRecord(objectId, op.ds, op.id)
    if (!rec || rec.deleted || rec.value === undefined) {
      out.push(op)
      continue
    }
    const cur = getPath(rec.value, TEXT_FIELD)
    const yt = rec.yt && Object.prototype.hasOwnProperty.call(rec.yt, TEXT_FIELD) ? YTextField.from(rec.yt[TEXT_FIELD]) : undefined
    const update = ownTextUpdates(
      `${salt}\u0000${space.spaceId}\u0000${objectId}\u0000${op.ds}\u0000${op.id}\u0000${TEXT_FIELD}`,
      yt,
      typeof cur === 'string' ? cur : '',
      op.value,
      client,
    )
    if (update === 'set') out.push(op)
    else for (const u of update) out.push({ op: 'ytext', ds: op.ds, id: op.id, path: TEXT_FIELD, update: u, salt })
  }
  return out
}
