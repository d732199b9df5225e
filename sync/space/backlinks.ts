import type { Json } from '../crdt/ops.ts'
import { isJsonObject } from './rows.ts'
import type { SpaceEngine } from './space-engine.ts'

/** Scheme of a relation value: a plain `svc://<objectId>` (spec "Property definition" rule 3). */
export const RELATION_SCHEME = 'svc://'

export interface Backlink {
  /** The object whose row holds the link. */
  objectId: string
  /** The namespace the value lives in (`core` or a type id). */
  typeId: string
  propId: string
}

/** Row keys that are not per-type namespaces (derived fields of the object row). */
const NOT_NAMESPACES = new Set(['id', 'author', 'spaceId', 'createdAt', 'modifiedAt', 'modifiedBy', '_ver', '_traces', '_deletedAt'])

const linksTo = (v: Json, target: string): boolean => v === target || (Array.isArray(v) && v.includes(target))

/**
 * `GET {O}/backlinks`: every live object row holding the value `svc://<objectId>` (alone or
 * as an element of an array value) at `{typeId}.{propId}`. A reverse lookup over the values
 * themselves, not over property definitions, so links under removed or unknown properties are
 * found too (reads are tolerant). Unknown or deleted ids give an empty list. Sorted by object,
 * type and property id. Cost: one pass over the space's object rows (held in memory).
 */
export function backlinks(engine: SpaceEngine, objectId: string): Backlink[] {
  const target = RELATION_SCHEME + objectId
  const out: Backlink[] = []
  for (const row of engine.objectDocs()) {
    for (const [typeId, group] of Object.entries(row)) {
      if (NOT_NAMESPACES.has(typeId) || !isJsonObject(group)) continue
      for (const [propId, v] of Object.entries(group)) if (linksTo(v, target)) out.push({ objectId: row.id, typeId, propId })
    }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  return out.sort((a, b) => cmp(a.objectId, b.objectId) || cmp(a.typeId, b.typeId) || cmp(a.propId, b.propId))
}
