import type { Json, JsonObject } from '../crdt/ops.ts'
import type { MaterializedRecord } from '../replica/space-replica.ts'

/** The spec's instant wrapper. */
export const instant = (ms: number): { $date: string } => ({ $date: new Date(ms).toISOString() })

/** A query document: what query, sort and projection run over, and what routes return. */
export type Doc = JsonObject & { id: string }

/**
 * An object row as the spec shows it ("Object row"): the stored row (`core` and per-type
 * namespaces) plus the derived, read-only fields stamped by merge.
 */
export function objectRowDoc(objectId: string, spaceId: string, rec: MaterializedRecord): Doc {
  const value = (rec.value ?? {}) as JsonObject
  return {
    ...value,
    id: objectId,
    core: value.core ?? { types: [] },
    author: rec.created.a,
    spaceId,
    createdAt: instant(rec.created.t),
    modifiedAt: instant(rec.modified.t),
    modifiedBy: rec.modified.a,
    _ver: { id: rec.verId },
    ...fullFormExtras(rec),
  }
}

/**
 * Spec "Object row": full-form records also carry `_traces` (the trace ids of the change that
 * last modified the record, when it carried some) and `_deletedAt` (when the record is a
 * tombstone; queries and live windows never hold tombstones, so only views of a deleted record
 * show it).
 */
function fullFormExtras(rec: MaterializedRecord): JsonObject {
  const out: JsonObject = {}
  if (rec.modified.tr?.length) out._traces = [...rec.modified.tr]
  if (rec.deleted && rec.deletedAt !== undefined) out._deletedAt = instant(rec.deletedAt)
  return out
}

/** A dataset record as a query document: its fields, its id, `_ver`, and `_traces`/`_deletedAt` when present. */
export function recordDoc(rec: MaterializedRecord): Doc {
  const value = (rec.value ?? {}) as JsonObject
  return { ...value, id: rec.id, _ver: { id: rec.verId }, ...fullFormExtras(rec) }
}

export const isJsonObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

export const asStringArray = (v: Json | undefined): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
