import type { Logger } from '../../sync/core/log.ts'
import { errField } from '../../sync/core/log.ts'
import { EVENTS } from '../../sync/core/events-limits.ts'
import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import type { HubCore } from '../../sync/hub/hub-core.ts'
import { EventRelay } from '../../sync/hub/event-relay.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import type { SvcLibp2p } from '../p2p/libp2p-node.ts'

/**
 * The hub's side of `/svc/events/1.0.0`: the same framed stream per peer as a daemon's, each
 * frame judged by the EventRelay (sync/hub/event-relay.ts) and forwarded unchanged. A forgery or
 * garbage is a fault of the peer; rate and duplicates are not.
 */
export async function startHubEvents(o: {
  node: SvcLibp2p
  core: HubCore
  crypto: CryptoProvider
  now: () => number
  identityOf(peer: string): string | undefined
  refused(peer: string): boolean
  fault(peer: string): void
  log: Logger
}): Promise<{ relay: EventRelay; close(): Promise<void> }> {
  const transport = await Libp2pTransport.start(o.node, {
    protocol: EVENTS.protocol,
    maxFrameBytes: EVENTS.maxFrameBytes,
    maxQueuedSendBytes: EVENTS.maxQueuedSendBytes,
    sendWatermarkBytes: EVENTS.sendWatermarkBytes,
    maxQueuedFrames: EVENTS.maxQueuedFrames,
    maxReadBufferBytes: EVENTS.maxFrameBytes + 16 + P2P.maxStreamWindowBytes,
  })
  transport.setPeerFilter((p) => o.refused(p))
  transport.onPeerFault((p) => o.fault(p))
  const relay = new EventRelay(
    {
      replica: (spaceId) => o.core.openReplica(spaceId),
      peers: () => transport.peers().map((peer) => ({ peer, identity: o.identityOf(peer) })),
    },
    o.crypto,
    o.now,
  )
  transport.onMessage(async (peer, bytes) => {
    const r = await relay.route(peer, o.identityOf(peer), bytes).catch((err: unknown) => {
      o.log.warn('judging an event frame failed', { peer, err: errField(err) })
      return 'malformed' as const
    })
    if (typeof r === 'string') {
      if (r === 'bad_signature' || r === 'malformed' || r === 'signer_mismatch') o.fault(peer)
      return
    }
    for (const to of r) {
      try {
        transport.send(to, bytes)
      } catch (err) {
        // A peer whose stream is full or gone misses this event: events are at most once.
        o.log.debug('relaying an event to a peer failed', { peer: to, err: errField(err) })
      }
    }
  })
  return { relay, close: () => transport.close() }
}
