import type { Json } from '../../crdt/ops.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { refuseReservedCarriers } from './reserved-carrier.ts'
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
  const initialProperties: Record<string, Record<string, Json>> = {}
  const scoped: Array<[string, Record<string, Json>]> = []
  for (const [group, values] of Object.entries(body.initialProperties ?? {})) {
    const split = await splitValues(engine, group, values)
    initialProperties[group] = split.synced
    if (Object.keys(split.scoped).length) scoped.push([group, split.scoped])
  }
  const objectId = await engine.createObjectRow({ ...(body.types ? { types: body.types } : {}), initialProperties })
  for (const [group, values] of scoped) await setPropertyValues(engine, store, objectId, group, values)
  return objectId
}
