import type { FastifyInstance } from 'fastify'
import { EventStream, NoContent } from '../schemas/common.ts'
import { SpaceInfo, SpaceParams } from '../schemas/spaces.ts'
import { AclAddBody, AclAddResult, MemberList, MemberListQuery, MemberParams, MemberRecord, RequestBody, RoleBody } from '../schemas/sharing.ts'
import { forwarder } from '../http/forwarder.ts'
import { typed } from '../http/type-provider.ts'
import type { RouteHost } from './context.ts'

/**
 * Members, join requests and direct adds (spec "Invites and guest key", "One-to-one and
 * direct-add"; the members routes the spec does not show are of our design, docs/api.md
 * "Members"). Every rule lives in the account's sharing service.
 */
export function memberRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    const sharing = () => engine.account().sharing

    app.get(
      '/v1/spaces/:spaceId/members',
      { schema: { summary: 'Members and pending join requests', params: SpaceParams, querystring: MemberListQuery, response: { 200: MemberList } } },
      async (request) => ({ members: sharing().members(request.params.spaceId, request.query.status === 'all') }),
    )

    app.get(
      '/v1/spaces/:spaceId/members/me',
      { schema: { summary: "This account's member record (a joiner polls it)", params: SpaceParams, response: { 200: MemberRecord } } },
      async (request) => sharing().memberMe(request.params.spaceId),
    )

    app.get(
      '/v1/spaces/:spaceId/members/subscribe',
      { schema: { summary: 'Member changes (SSE)', params: SpaceParams, response: { 200: EventStream('ready, member, lagged, closed') } } },
      async (request, reply) => {
        const { spaceId } = request.params
        sharing().members(spaceId)
        const stream = app.sse.open(reply)
        if (stream.closed) return
        const forward = forwarder(stream, 'member')
        stream.onClose(sharing().watchMembers(spaceId, forward))
      },
    )

    app.patch(
      '/v1/spaces/:spaceId/members/:identity',
      { schema: { summary: "Change a member's role (only the owner grants or changes admin)", params: MemberParams, body: RoleBody, response: { 204: NoContent } } },
      async (request, reply) => {
        await sharing().setRole(request.params.spaceId, request.params.identity, request.body.role)
        return reply.code(204).send()
      },
    )

    app.delete(
      '/v1/spaces/:spaceId/members/:identity',
      { schema: { summary: 'Remove a member; rotates the read key', params: MemberParams, response: { 204: NoContent } } },
      async (request, reply) => {
        await sharing().removeMember(request.params.spaceId, request.params.identity)
        return reply.code(204).send()
      },
    )

    app.post(
      '/v1/spaces/:spaceId/acl/add',
      { schema: { summary: 'Put accounts on the ACL directly; each sees an invite_pending row', params: SpaceParams, body: AclAddBody, response: { 200: AclAddResult } } },
      async (request) => sharing().addMembers(request.params.spaceId, request.body.identities, request.body.permission),
    )

    app.post(
      '/v1/spaces/:spaceId/acl/accept',
      { schema: { summary: 'Accept a join request (the read key is wrapped to the joiner)', params: SpaceParams, body: RequestBody, response: { 200: MemberRecord } } },
      async (request) => sharing().acceptRequest(request.params.spaceId, request.body),
    )

    app.post(
      '/v1/spaces/:spaceId/acl/decline',
      { schema: { summary: 'Decline a join request', params: SpaceParams, body: RequestBody, response: { 204: NoContent } } },
      async (request, reply) => {
        await sharing().declineRequest(request.params.spaceId, request.body)
        return reply.code(204).send()
      },
    )

    app.post(
      '/v1/spaces/:spaceId/acl/cancel-join',
      { schema: { summary: 'Withdraw our pending join', params: SpaceParams, response: { 204: NoContent } } },
      async (request, reply) => {
        await sharing().cancelJoin(request.params.spaceId)
        return reply.code(204).send()
      },
    )

    app.post(
      '/v1/spaces/:spaceId/invite/accept',
      { schema: { summary: 'Accept a direct add (invite_pending)', params: SpaceParams, response: { 200: SpaceInfo, 202: SpaceInfo } } },
      async (request, reply) => {
        const { info, ready } = await sharing().acceptInvite(request.params.spaceId)
        return reply.code(ready ? 200 : 202).send(info)
      },
    )

    app.post(
      '/v1/spaces/:spaceId/invite/decline',
      { schema: { summary: 'Decline a direct add (synced, sticky, non-terminal)', params: SpaceParams, response: { 204: NoContent } } },
      async (request, reply) => {
        await sharing().declineInvite(request.params.spaceId)
        return reply.code(204).send()
      },
    )
  }
}
