import type { FastifyInstance } from 'fastify'
import { NoContent } from '../schemas/common.ts'
import { SpaceInfo, SpaceParams } from '../schemas/spaces.ts'
import { InviteCreateBody, InviteList, InviteParams, InviteRecord, InviteToken, JoinBody } from '../schemas/sharing.ts'
import { typed } from '../http/type-provider.ts'
import type { RouteHost } from './context.ts'

/** Invites, the guest key and joining (spec "Invites and guest key", "Spaces" join). */
export function inviteRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    const sharing = () => engine.account().sharing

    app.post(
      '/v1/spaces/join',
      { schema: { summary: 'Join with an invite or guest token (auto-detected); 409 space.exists for a space already read', body: JoinBody, response: { 202: SpaceInfo } } },
      async (request, reply) => {
        const { info } = await sharing().joins.join(request.body.inviteToken, request.body.metadata)
        return reply.code(202).send(info)
      },
    )

    app.post(
      '/v1/spaces/:spaceId/invites',
      {
        schema: { summary: 'Create an invite; replaces any prior one', params: SpaceParams, body: InviteCreateBody, response: { 201: InviteToken } },
        // The spec's request is none: a call sending no body at all is a reader invite (an
        // empty JSON body stays 400 request.bad_json, as on every route).
        preValidation: async (request) => {
          if (request.body === undefined && request.headers['content-type'] === undefined) request.body = {}
        },
      },
      async (request, reply) => reply.code(201).send(await sharing().invites.create(request.params.spaceId, request.body.permission ?? 'reader')),
    )

    app.get(
      '/v1/spaces/:spaceId/invites',
      { schema: { summary: 'Live invites (tokens only where minted)', params: SpaceParams, response: { 200: InviteList } } },
      async (request) => ({ invites: await sharing().invites.list(request.params.spaceId) }),
    )

    app.get('/v1/spaces/:spaceId/invites/:recordId', { schema: { summary: 'One live invite', params: InviteParams, response: { 200: InviteRecord } } }, async (request) =>
      sharing().invites.get(request.params.spaceId, request.params.recordId),
    )

    app.delete(
      '/v1/spaces/:spaceId/invites/:recordId',
      { schema: { summary: 'Revoke one invite', params: InviteParams, response: { 204: NoContent } } },
      async (request, reply) => {
        await sharing().invites.revoke(request.params.spaceId, request.params.recordId)
        return reply.code(204).send()
      },
    )

    app.delete(
      '/v1/spaces/:spaceId/invites',
      { schema: { summary: 'Revoke every member invite (the guest key has its own route)', params: SpaceParams, response: { 204: NoContent } } },
      async (request, reply) => {
        await sharing().invites.revokeAll(request.params.spaceId)
        return reply.code(204).send()
      },
    )

    app.post(
      '/v1/spaces/:spaceId/guest-key',
      { schema: { summary: 'The guest key (owner only; the same token on repeat)', params: SpaceParams, response: { 200: InviteToken } } },
      async (request) => sharing().invites.guestKey(request.params.spaceId),
    )

    app.delete(
      '/v1/spaces/:spaceId/guest-key',
      { schema: { summary: 'Revoke the guest key: guests removed, read key rotated, old tokens dead', params: SpaceParams, response: { 204: NoContent } } },
      async (request, reply) => {
        await sharing().invites.revokeGuestKey(request.params.spaceId)
        return reply.code(204).send()
      },
    )
  }
}
