import { SvcError } from '../../core/errors.ts'
import { isJsonObject } from '../rows.ts'
import { ROW_DS, ROW_ID } from '../schema.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { BUNDLE_MARK } from './model.ts'
import { dropClaim, elect, readEntry, rootPresent, type Election, type RegistryEntry } from './registry.ts'

/** The registry entry of an installed bundle (a live claim left), or 404 `bundle.not_found`. */
export async function requireBundle(engine: SpaceEngine, bundleId: string): Promise<{ entry: RegistryEntry; election: Election }> {
  const entry = await readEntry(engine, bundleId)
  const election = entry && elect(engine, entry)
  if (!entry || !election) throw new SvcError('bundle.not_found', 'bundle not found', { id: bundleId })
  return { entry, election }
}

/**
 * `POST {S}/bundles/:bundleId/resolve {loserRootId}`: releases a losing root, which becomes an
 * ordinary object: its bundle mark is unset (one change on the loser) and its claim dropped
 * from the registry (one change on the space index), so it is no longer listed in `losers`.
 * The object itself stays (delete it with `DELETE {O}` if it is not wanted). 404
 * `bundle.not_found`; 409 `bundle.not_loser` when the id is not a current loser of the bundle
 * (the winner, an unknown id, or one already resolved); 409 `bundle.loser_not_ready` while the
 * loser's row has not arrived here (its mark cannot be unset yet). Call under the lock.
 */
export async function resolveLoser(engine: SpaceEngine, bundleId: string, loserRootId: string): Promise<void> {
  await engine.settled()
  const { election } = await requireBundle(engine, bundleId)
  if (!election.losers.some((c) => c.rootId === loserRootId)) {
    throw new SvcError('bundle.not_loser', 'this root is not a losing root of the bundle', { id: bundleId, loserRootId, rootId: election.winner.rootId })
  }
  if (!rootPresent(engine, loserRootId))
    throw new SvcError('bundle.loser_not_ready', "the losing root's object has not arrived on this replica yet; retry after sync", { id: bundleId, loserRootId })
  const mark = engine.objectDoc(loserRootId)?.[BUNDLE_MARK]
  if (isJsonObject(mark) && mark.id === bundleId) await engine.write(loserRootId, [{ op: 'unset', ds: ROW_DS, id: ROW_ID, path: BUNDLE_MARK }])
  await dropClaim(engine, bundleId, loserRootId)
}
