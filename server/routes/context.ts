import type { AccountEngine } from '../../sync/space/account-engine.ts'
import type { SpaceServices } from '../../sync/space/services.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import type { TypesService } from '../../sync/space/types/index.ts'

/**
 * What the engine routes need from the daemon's engine: the booted account, and the hook the
 * P2P layer fills to force a head-sync round (`POST {S}/sync`).
 */
export interface RouteHost {
  account(): AccountEngine
  /** Runs one head-sync round of a space with every reachable peer; absent until P2P is wired. */
  syncNow?(spaceId: string): Promise<void>
}

export const space = (engine: RouteHost, spaceId: string): SpaceEngine => engine.account().space(spaceId)
/** The services the space built when it opened (types, bundles, one per module). */
export const spaceServices = (engine: RouteHost, spaceId: string): SpaceServices => space(engine, spaceId).services
/** The space's TypesService, holding the account's store of account- and local-scope values. */
export const types = (engine: RouteHost, spaceId: string): TypesService => spaceServices(engine, spaceId).types

/** The objectId of a write body (spec "Query body"); one rule with query bodies. */
export { requireObjectId as objectIdOf } from '../../sync/query/body.ts'
