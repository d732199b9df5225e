import type { FastifyInstance } from 'fastify'
import type { DaemonHost } from '../../node/daemon/daemon-host.ts'
import type { AddedPeers } from '../../node/p2p/added-peers.ts'
import { SvcError } from '../../sync/core/errors.ts'
import { typed } from '../http/type-provider.ts'
import { NoContent } from '../schemas/common.ts'
import { PeerAdd, PeerList, PeerParams, PeerRecord } from '../schemas/peers.ts'

/**
 * Peers beyond the LAN (docs/api.md "Peers"): added by multiaddr, kept in the account directory,
 * redialled with backoff. Each route calls one method of the P2P side's AddedPeers.
 */
export function peerRoutes(engine: DaemonHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    const peers = (): AddedPeers => {
      const p2p = engine.p2p()
      if (!p2p) throw new SvcError('server.unavailable', 'P2P is off on this daemon')
      return p2p.peers
    }

    app.get('/v1/peers', { schema: { summary: 'Peers added by address, with their connection state', response: { 200: PeerList } } }, async () => ({
      peers: engine.p2p()?.peers.list() ?? [],
    }))

    app.post(
      '/v1/peers',
      { schema: { summary: 'Add a peer by multiaddr (kept, dialled at once and redialled)', body: PeerAdd, response: { 200: PeerRecord, 201: PeerRecord } } },
      async (request, reply) => {
        const { peer, created } = peers().add(request.body.multiaddr)
        reply.code(created ? 201 : 200)
        return peer
      },
    )

    app.delete('/v1/peers/:peerId', { schema: { summary: 'Forget an added peer (no more redials)', params: PeerParams, response: { 204: NoContent } } }, async (request, reply) => {
      peers().remove(request.params.peerId)
      reply.code(204)
    })
  }
}
