import type { FastifyInstance } from 'fastify'
import type { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { accountRoutes } from './account.ts'
import type { RouteHost } from './context.ts'
import { objectRoutes } from './objects.ts'
import { spaceRoutes } from './spaces.ts'
import { typeRoutes } from './types.ts'
import { syncRoutes } from './sync.ts'
import { peerRoutes } from './peers.ts'
import { hubRoutes } from './hubs.ts'
import { aggregateRoutes } from './aggregate.ts'
import { historyRoutes } from './history.ts'
import { bundleRoutes } from './bundles.ts'
import { catalogRoutes } from './catalog.ts'
import { memberRoutes } from './members.ts'
import { inviteRoutes } from './invites.ts'
import { oneToOneRoutes } from './one-to-one.ts'

/** The core route areas served by the engine, each a plugin over the booted account's engine (modules bring their own: buildApp). */
export function engineRoutes(engine: DaemonHost | RouteHost): Array<(app: FastifyInstance) => Promise<void>> {
  const e = engine
  const routes = [
    accountRoutes(e),
    spaceRoutes(e),
    typeRoutes(e),
    objectRoutes(e),
    aggregateRoutes(e),
    historyRoutes(e),
    bundleRoutes(e),
    catalogRoutes(e),
    memberRoutes(e),
    inviteRoutes(e),
    oneToOneRoutes(e),
  ]
  // Debug, sync status, processes and devices need the daemon's P2P side.
  if ('p2p' in engine) routes.push(syncRoutes(engine), peerRoutes(engine), hubRoutes(engine))
  return routes
}
