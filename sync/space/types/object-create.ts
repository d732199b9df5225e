import { SvcError, withIndex } from '../../core/errors.ts'
import type { Json } from '../../crdt/ops.ts'
import type { ObjectRowBody, SpaceEngine } from '../space-engine.ts'
import { refuseReservedCarriers, reservedKindOf } from './reserved-carrier.ts'
import { setPropertyValues, splitValues, type ScopedValueStore } from './values.ts'

/** Spec "Objects" (`POST {S}/objects`): the types an object carries for its life, and its first values by type key (`core` for the universal group). */
export interface ObjectCreateBody {
  types?: string[]
  initialProperties?: Record<string, Record<string, unknown>>
}

/**
 * Creates an object under the rules of spec "Objects", whoever calls: the route and a web page
 * (which reaches `SpaceEngine.createObject` without HTTP) get the same answer.
 *
 * - A type whose part declares a reserved-carrier kind is refused (400 `type.reserved_carrier`):
 *   only the object the system installs may hold a chat (chat.md).
 * - Each group's values are checked like a typed set (values.ts: 404 `type.not_found` or
 *   `property.not_found`, 400 `property.format_violation`); values of removed properties are
 *   dropped, as a typed set drops them.
 * - Account- and local-scope values are kept out of the row, which every member receives: they
 *   go to the scoped store once the object exists.
 *
 * Errors come in that order, then the row checks of `SpaceEngine.createObjectRow`.
 */
export async function createObject(engine: SpaceEngine, store: ScopedValueStore, body: ObjectCreateBody): Promise<string> {
  await refuseReservedCarriers(engine, body.types ?? [], 'types')
  const { row, scoped } = await splitBody(engine, body)
  const objectId = await engine.createObjectRow(row)
  for (const [group, values] of scoped) await setPropertyValues(engine, store, objectId, group, values)
  return objectId
}

/**
 * Creates many objects in one go (`POST {S}/objects/batch`), each under the rules of
 * `createObject`, all or none: every entry is checked first, and the first that fails answers
 * the error a single create would, with the entry's position in `details.index`; then the rows
 * are written page by page (SpaceEngine.createObjectRows), and account- and local-scope values
 * go to the scoped store. Returns the ids in input order.
 */
export async function createObjects(engine: SpaceEngine, store: ScopedValueStore, bodies: readonly ObjectCreateBody[]): Promise<string[]> {
  /** Reserved-carrier verdicts by type id: most entries of a bulk create carry the same types. */
  const kinds = new Map<string, string | undefined>()
  const rows: ObjectRowBody[] = []
  const scopedOf: Array<Array<[string, Record<string, Json>]>> = []
  for (let index = 0; index < bodies.length; index++) {
    const body = bodies[index]
    try {
      for (const typeId of body.types ?? []) {
        if (!kinds.has(typeId)) kinds.set(typeId, await reservedKindOf(engine, typeId))
        const kind = kinds.get(typeId)
        if (kind) throw new SvcError('type.reserved_carrier', `only the object the system installs may carry a ${kind} type`, { typeId, field: 'types', module: kind })
      }
      const { row, scoped } = await splitBody(engine, body)
      rows.push(row)
      scopedOf.push(scoped)
    } catch (err) {
      throw withIndex(err, index)
    }
  }
  const ids = await engine.createObjectRows(rows)
  for (let i = 0; i < ids.length; i++) for (const [group, values] of scopedOf[i]) await setPropertyValues(engine, store, ids[i], group, values)
  return ids
}

/** A create body's values checked like a typed set, split into the row's and the scoped store's. */
async function splitBody(engine: SpaceEngine, body: ObjectCreateBody): Promise<{ row: ObjectRowBody; scoped: Array<[string, Record<string, Json>]> }> {
  const initialProperties: Record<string, Record<string, Json>> = {}
  const scoped: Array<[string, Record<string, Json>]> = []
  for (const [group, values] of Object.entries(body.initialProperties ?? {})) {
    const split = await splitValues(engine, group, values)
    initialProperties[group] = split.synced
    if (Object.keys(split.scoped).length) scoped.push([group, split.scoped])
  }
  return { row: { ...(body.types ? { types: body.types } : {}), initialProperties }, scoped }
}
