import { propertyIdSync } from '../crypto/hash.ts'
import { CHANGE_DERIVED_ID, type Op } from '../crdt/ops.ts'
import { resolveUserOps, type UserOp } from '../crdt/resolve.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import type { WriteRejection, WriteResult } from '../replica/types.ts'

/**
 * Spec-shaped modify: per record, user ops ($set/$unset/$inc/$addToSet/$pull) are resolved
 * against current state into set/unset, then written as one change. The read, the resolution
 * and the write run as one step of the replica's serial queue, so two concurrent modifies
 * never resolve against the same stale value.
 */
export async function modifyRecords(replica: SpaceReplica, objectId: string, ds: string, records: Array<{ id: string; ops: UserOp[] }>, traceIds?: string[]): Promise<WriteResult> {
  const rejections: WriteRejection[] = []
  const result = await replica.writeResolved(objectId, async (read) => {
    const ops: Op[] = []
    for (const rec of records) {
      const cur = await read(ds, rec.id)
      const res = resolveUserOps(cur?.deleted ? undefined : cur?.value, rec.ops)
      for (const r of res.rejections) rejections.push({ recordId: rec.id, index: r.index, code: r.code, reason: r.reason })
      for (const o of res.ops) ops.push(o.k === 'set' ? { op: 'set', ds, id: rec.id, path: o.p, value: o.v } : { op: 'unset', ds, id: rec.id, path: o.p })
    }
    return { ops, traceIds }
  })
  // Records created under the change-derived id come back under the id they got. A write that
  // changed nothing (every op rejected, or each equal to what is stored) names no record.
  result.recordIds = result.changeId === '' ? [] : [...new Set(records.map((r) => (r.id === CHANGE_DERIVED_ID ? propertyIdSync(result.changeId) : r.id)))]
  if (rejections.length) result.rejections = [...rejections, ...(result.rejections ?? [])]
  return result
}
