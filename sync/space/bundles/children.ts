import { SvcError } from '../../core/errors.ts'
import { ROW_DS, ROW_ID } from '../schema.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { notReady } from './install.ts'
import { BUNDLE_MARK, bundleChildId, bundleChildSeed } from './model.ts'
import { rootPresent } from './registry.ts'
import { refuseReservedCarriers } from '../types/reserved-carrier.ts'
import { requireBundle } from './resolve.ts'

export interface ChildBody {
  seed: string
  types?: string[]
  /** `core.name` of a new child (the catalog names its children; the route does not take it). */
  name?: string
}

export const CHILD_SEED_MAX = 256

/**
 * `POST {S}/bundles/:bundleId/children {seed, types?}` -> `{objectId}`: the bundle's
 * deterministic child, a derived object of (space, bundle id, seed), so every device gets the
 * same id. The first call here creates it carrying `types` and the mark `bundle: {id, seed}`;
 * later calls (and calls after the child arrived from a peer) return it unchanged (`types`
 * ignored). Errors in order: 400 `request.invalid_field` (seed, types), 400 `type.not_found`,
 * 400 `type.reserved_carrier`, 404 `bundle.not_found`, 409 `bundle.not_ready` (the bundle's
 * root has not arrived here). Call under the lock.
 */
export async function bundleChild(engine: SpaceEngine, bundleId: string, body: ChildBody): Promise<{ objectId: string; created: boolean }> {
  await engine.settled()
  const { seed } = body
  if (typeof seed !== 'string' || seed.length === 0 || seed.length > CHILD_SEED_MAX)
    throw new SvcError('request.invalid_field', 'seed is a string of 1 to 256 characters', { field: 'seed' })
  const types = body.types === undefined ? [] : [...new Set(body.types)]
  if (!types.every((t) => typeof t === 'string')) throw new SvcError('request.invalid_field', 'types is an array of type ids', { field: 'types' })
  for (const t of types) {
    if (t === 'type') throw new SvcError('request.invalid_field', 'a child cannot be a type', { field: 'types' })
    if (!engine.typeExists(t)) throw new SvcError('type.not_found', 'unknown type in types', { typeId: t, field: 'types' })
  }
  await refuseReservedCarriers(engine, types, 'types')
  const { election } = await requireBundle(engine, bundleId)
  if (!rootPresent(engine, election.winner.rootId)) throw notReady(bundleId, election.winner.rootId)

  const objectId = bundleChildId(engine.spaceId, bundleId, seed)
  if (engine.objectDoc(objectId)) return { objectId, created: false }
  await engine.createTree({ seed: bundleChildSeed(bundleId, seed) })
  await engine.write(objectId, [
    { op: 'set', ds: ROW_DS, id: ROW_ID, path: 'core.types', value: types },
    { op: 'set', ds: ROW_DS, id: ROW_ID, path: BUNDLE_MARK, value: { id: bundleId, seed } },
    ...(typeof body.name === 'string' ? [{ op: 'set' as const, ds: ROW_DS, id: ROW_ID, path: 'core.name', value: body.name }] : []),
  ])
  return { objectId, created: true }
}
