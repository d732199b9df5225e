import { CHANGE_DERIVED_ID, type Json, type Op } from '../crdt/ops.ts'
import { deepEqual, withPath } from '../crdt/path.ts'

/**
 * Whether a local write would leave every record it touches exactly as it is: only `set` and
 * `unset` ops, each record's value after all of them (in order, as merge applies them) equal to
 * its value now. Such a write commits nothing: a signed change that changes nothing would
 * still enter history, sync to every peer and bump `modifiedAt` (40,000 identical sets made
 * 40,000 history entries). The whole change is kept or skipped, never thinned: an op equal to
 * the stored value may still undo an earlier op of the same change.
 *
 * `current` reads a record's live value (undefined when absent or deleted).
 */
export async function changesNothing(ops: readonly Op[], current: (ds: string, id: string) => Promise<Json | undefined>): Promise<boolean> {
  if (ops.length === 0) return true
  const before = new Map<string, Json | undefined>()
  const after = new Map<string, Json | undefined>()
  for (const op of ops) {
    // Deletes, object deletes and records named by the change's own id always change something.
    if ((op.op !== 'set' && op.op !== 'unset') || op.id === CHANGE_DERIVED_ID) return false
    const key = `${op.ds}\u0000${op.id}`
    if (!before.has(key)) {
      const value = await current(op.ds, op.id)
      // A set on an absent record creates it, even with an empty value.
      if (value === undefined && op.op === 'set') return false
      before.set(key, value)
      after.set(key, value)
    }
    after.set(key, withPath(after.get(key), op.path, op.op === 'set' ? op.value : undefined))
  }
  for (const [key, value] of before) if (!deepEqual(value, after.get(key))) return false
  return true
}
