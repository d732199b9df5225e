import type { FastifyInstance } from 'fastify'
import type { DaemonHost } from '../../node/daemon/daemon-host.ts'
import type { HubLinks } from '../../node/hubs/hub-links.ts'
import { SvcError } from '../../sync/core/errors.ts'
import { typed } from '../http/type-provider.ts'
import { NoContent } from '../schemas/common.ts'
import { HubAdd, HubList, HubParams, HubRecord } from '../schemas/hubs.ts'

/**
 * This account's hubs (docs/hub.md "Using a hub"; docs/api.md "Hubs"): added by multiaddr with
 * an optional admission token, kept in the account directory, kept connected; each with where
 * every space stands there. Each route calls one method of the hub link.
 */
export function hubRoutes(engine: DaemonHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    const hubs = (): HubLinks => {
      const h = engine.hubs()
      if (!h) throw new SvcError('server.unavailable', 'P2P is off on this daemon')
      return h
    }

    app.get('/v1/hubs', { schema: { summary: "This account's hubs, with each space's state there", response: { 200: HubList } } }, async () => ({
      hubs: engine.hubs()?.list() ?? [],
    }))

    app.post(
      '/v1/hubs',
      { schema: { summary: 'Add a hub by multiaddr (kept, dialled, every space registered with it)', body: HubAdd, response: { 200: HubRecord, 201: HubRecord } } },
      async (request, reply) => {
        const { hub, created } = hubs().add(request.body.multiaddr, request.body.token)
        reply.code(created ? 201 : 200)
        return hub
      },
    )

    app.delete(
      '/v1/hubs/:peerId',
      { schema: { summary: 'Forget a hub (no more redials; it stops being a custodian of our spaces)', params: HubParams, response: { 204: NoContent } } },
      async (request, reply) => {
        hubs().remove(request.params.peerId)
        reply.code(204)
      },
    )
  }
}
