import type { AgentsOptions } from '../agents/host.ts'
import { agentsService } from '../agents/service.ts'
import { blocksProtocol } from '../p2p/protocols/blocks.ts'
import { eventsProtocol } from '../p2p/protocols/events.ts'
import { pushProtocol } from '../p2p/protocols/push.ts'
import { hubLinkService } from './hub-link-service.ts'
import type { PushConfig } from '../push/config.ts'
import { headSyncService, type HeadSyncInit } from './head-sync-service.ts'
import type { AnyDaemonService } from './service.ts'
import { syncProcessesService, syncStatusService } from './sync-services.ts'

export interface ReleaseServicesConfig {
  /** Head sync and every P2P protocol beside it; false runs none (tests of the HTTP API alone). */
  p2p: HeadSyncInit | false
  /** The push node to link the push module to (config key `push`, docs/push.md). */
  push?: PushConfig
  /** The agents of this device; absent: no agent runs on this daemon (`--agents-port -1`). */
  agents?: AgentsOptions
  /** Hubs named by the configuration (`hubs`); the hub link runs with P2P whether or not any is named (hubs can be added over the API). */
  hubs?: readonly string[]
}

/**
 * The release's daemon services for a booted account, built from the configuration: the one
 * list a new daemon-side capability joins (docs/architecture.md "Adding a daemon service").
 * The order here is the start order where `needs` and `after` leave it free.
 */
export function releaseServices(c: ReleaseServicesConfig): AnyDaemonService[] {
  const p2p =
    c.p2p === false
      ? []
      : [headSyncService(c.p2p), syncProcessesService(), eventsProtocol(), blocksProtocol(), pushProtocol(c.push), hubLinkService({ hubs: c.hubs ?? [], redial: c.p2p.redial })]
  return [...p2p, syncStatusService(), ...(c.agents ? [agentsService(c.agents)] : [])]
}
