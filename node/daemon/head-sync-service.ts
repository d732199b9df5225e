import { join } from 'node:path'
import { P2P } from '../../sync/p2p/constants.ts'
import type { SchedulerOptions } from '../../sync/protocol/sync-scheduler.ts'
import { HEAD_SYNC } from '../p2p/protocols/protocol.ts'
import { P2PService } from './p2p-service.ts'
import type { BaseComponents, DaemonService } from './service.ts'

/** Head sync's part of the configuration (`svc serve` keys p2pListen, peers, noMdns; tests shorten the delays). */
export interface HeadSyncInit {
  mdns: boolean
  listen?: string[]
  /** Peers the configuration names (multiaddrs with /p2p/<id>), dialled for this run. */
  peers?: readonly string[]
  scheduler?: SchedulerOptions
  redial?: { baseMs?: number; maxMs?: number }
  joinRetry?: { baseMs?: number; maxMs?: number }
}

/**
 * The daemon's P2P side as a daemon service: the libp2p node, head sync for every space the
 * account holds, sharing over the wire. It provides the node, the peer trust the protocols
 * beside it share, and itself (`p2p`) for the routes and the services that read its links.
 */
export const headSyncService = (init: HeadSyncInit): DaemonService<Pick<BaseComponents, 'account' | 'keys' | 'crypto' | 'env' | 'dir' | 'durability'>> => ({
  name: HEAD_SYNC,
  async start(c) {
    const p2p = await P2PService.start({
      account: c.account,
      keys: c.keys,
      crypto: c.crypto,
      env: c.env,
      mdns: init.mdns,
      listen: init.listen,
      scheduler: init.scheduler,
      peersFile: join(c.dir, P2P.peersFile),
      portFile: join(c.dir, P2P.portFile),
      configPeers: init.peers,
      redial: init.redial,
      durability: c.durability,
      joinRetry: init.joinRetry,
    })
    c.account.attachNetwork(p2p.sharing)
    return { provides: { p2p, node: p2p.node, peers: p2p.trust }, stop: () => p2p.stop() }
  },
})
