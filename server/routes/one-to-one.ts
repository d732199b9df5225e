import type { FastifyInstance } from 'fastify'
import { NoContent } from '../schemas/common.ts'
import { OneToOneBody, RegisterIncomingBody } from '../schemas/one-to-one.ts'
import { SpaceInfo, SpaceParams } from '../schemas/spaces.ts'
import type { RouteHost } from './context.ts'
import { typed } from '../http/type-provider.ts'

/** Spec "One-to-one and direct-add", the one-to-one half (sync/space/one-to-one.ts has the rules). */
export function oneToOneRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.post(
      '/v1/spaces/one-to-one',
      {
        schema: {
          summary: 'Start a one-to-one with another account: initiate, accept what it started, or un-decline',
          body: OneToOneBody,
          response: { 201: SpaceInfo },
        },
      },
      async (request, reply) => reply.code(201).send(await engine.account().oneToOne.initiate(request.body.otherIdentity)),
    )

    app.post(
      '/v1/spaces/one-to-one/register-incoming',
      {
        schema: {
          summary: 'Record a one-to-one learnt out of band (idempotent): a pending row until accepted',
          body: RegisterIncomingBody,
          response: { 204: NoContent },
        },
      },
      async (request, reply) => {
        await engine.account().oneToOne.registerIncoming(request.body.peerIdentity, request.body.displayHint)
        return reply.code(204).send()
      },
    )

    app.post('/v1/spaces/:spaceId/one-to-one/accept', { schema: { summary: 'Accept a pending one-to-one', params: SpaceParams, response: { 200: SpaceInfo } } }, async (request) =>
      engine.account().oneToOne.accept(request.params.spaceId),
    )

    app.post(
      '/v1/spaces/:spaceId/one-to-one/decline',
      { schema: { summary: 'Decline a one-to-one (synced to own devices; sticky until the peer starts again)', params: SpaceParams, response: { 204: NoContent } } },
      async (request, reply) => {
        await engine.account().oneToOne.decline(request.params.spaceId)
        return reply.code(204).send()
      },
    )
  }
}
