import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { parseSnapshotBody, parseSubscribeBody, runQuery } from '../../sync/query/index.ts'
import { EventStream, NoContent } from '../schemas/common.ts'
import { QueryResult, SpacesQueryBody, SpacesSubscribeBody } from '../schemas/query.ts'
import { DatasetListing, DerivedParams, DerivedSpaces, NameFields, SettingsBody, SpaceCreateBody, SpaceInfo, SpaceListQuery, SpaceParams } from '../schemas/spaces.ts'
import { TECH_DATASETS } from '../schemas/tech-datasets.ts'
import { space, types, type RouteHost } from './context.ts'
import { techFeed } from '../../sync/space/live-feeds.ts'
import { openLive } from './live.ts'
import { typed } from '../http/type-provider.ts'
import { liveRoute } from '../http/live-route.ts'

/** Spec "Spaces" (invites, joins, one-to-one, members and ACL routes are another area). */
export function spaceRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.post('/v1/spaces', { schema: { summary: 'Create a space (owned by this account)', body: SpaceCreateBody, response: { 201: SpaceInfo } } }, async (request, reply) =>
      reply.code(201).send(await engine.account().createSpace(request.body)),
    )

    app.get(
      '/v1/spaces',
      { schema: { summary: 'Spaces of the account; active only unless ?status=', querystring: SpaceListQuery, response: { 200: Type.Array(SpaceInfo) } } },
      async (request) => engine.account().listSpaces(request.query.status ?? 'active'),
    )

    app.post(
      '/v1/spaces/query',
      { schema: { summary: 'Query raw tech-space rows (dataset spaces or profile)', body: SpacesQueryBody, response: { 200: QueryResult } } },
      async (request) => {
        const body = parseSnapshotBody(request.body)
        const dataset = (body.dataset ?? 'spaces') as 'spaces' | 'profile'
        return runQuery(await engine.account().techDocs(dataset), body.query)
      },
    )

    liveRoute(
      root,
      '/v1/spaces/query/subscribe',
      { schema: { summary: 'Live tech-space rows (SSE, windowed frames)', body: SpacesSubscribeBody, response: { 200: EventStream('ready, snapshot, changes, closed') } } },
      async (request, reply) => {
        const body = parseSubscribeBody(request.body)
        await openLive(app, reply, body, techFeed(engine.account(), (body.dataset ?? 'spaces') as 'spaces' | 'profile'))
      },
    )

    app.get('/v1/spaces/derived', { schema: { summary: 'Derived spaces by name (resolves, never creates)', response: { 200: DerivedSpaces } } }, async () => ({
      spaces: await engine.account().derivedSpaces(),
    }))

    app.post(
      '/v1/spaces/derived/:name',
      { schema: { summary: 'Create or return a derived space (idempotent)', params: DerivedParams, response: { 201: SpaceInfo } } },
      async (request, reply) => reply.code(201).send(await engine.account().ensureDerivedSpace(request.params.name)),
    )

    app.get('/v1/datasets', { schema: { summary: 'Tech-space system datasets', response: { 200: DatasetListing } } }, async () => ({
      datasets: TECH_DATASETS,
    }))

    app.get('/v1/spaces/:spaceId', { schema: { summary: 'One space (any status the account knows)', params: SpaceParams, response: { 200: SpaceInfo } } }, async (request) =>
      engine.account().info(request.params.spaceId),
    )

    app.patch(
      '/v1/spaces/:spaceId',
      { schema: { summary: 'Name, description, icon: absent keeps, empty string clears', params: SpaceParams, body: NameFields, response: { 204: NoContent } } },
      async (request, reply) => {
        await engine.account().patchSpace(request.params.spaceId, request.body)
        return reply.code(204).send()
      },
    )

    app.patch(
      '/v1/spaces/:spaceId/settings',
      { schema: { summary: 'Account-private settings of a space', params: SpaceParams, body: SettingsBody, response: { 204: NoContent } } },
      async (request, reply) => {
        const { set = {}, unset = [] } = request.body
        await engine.account().patchSettings(request.params.spaceId, set as never, unset)
        return reply.code(204).send()
      },
    )

    app.post(
      '/v1/spaces/:spaceId/sync',
      { schema: { summary: 'One head-sync round with reachable peers; returns when done', params: SpaceParams, response: { 204: NoContent } } },
      async (request, reply) => {
        const { spaceId } = request.params
        space(engine, spaceId)
        await engine.syncNow?.(spaceId)
        return reply.code(204).send()
      },
    )

    app.delete(
      '/v1/spaces/:spaceId',
      { schema: { summary: 'Delete a space (sticky tombstone; derived spaces refuse)', params: SpaceParams, response: { 204: NoContent } } },
      async (request, reply) => {
        await engine.account().deleteSpace(request.params.spaceId)
        return reply.code(204).send()
      },
    )

    app.get(
      '/v1/spaces/:spaceId/datasets',
      { schema: { summary: 'Collections of the space with their schemas', params: SpaceParams, response: { 200: DatasetListing } } },
      async (request) => ({ datasets: await types(engine, request.params.spaceId).listDatasets() }),
    )
  }
}
