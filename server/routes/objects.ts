import type { FastifyInstance } from 'fastify'
import { parseSnapshotBody, parseSubscribeBody } from '../../sync/query/index.ts'
import { runQueryFair } from '../http/query-scheduler.ts'
import { liveRoute } from '../http/live-route.ts'
import { backlinks } from '../../sync/space/backlinks.ts'
import { EventStream, NoContent } from '../schemas/common.ts'
import { Backlinks, ObjectBatchCreateBody, ObjectCreateBody, ObjectCreated, ObjectParams, ObjectsCreated } from '../schemas/objects.ts'
import {
  DataQueryBody,
  DataSubscribeBody,
  DeleteRecordsBody,
  ModifyBody,
  ObjectsQueryBody,
  ObjectsSubscribeBody,
  QueryResult,
  UpsertBody,
  UpsertResult,
  WriteResult,
} from '../schemas/query.ts'
import { SpaceParams } from '../schemas/spaces.ts'
import { objectIdOf, space, types, type RouteHost } from './context.ts'
import { datasetFeed, objectsFeed } from '../../sync/space/live-feeds.ts'
import { openLive } from './live.ts'
import { typed } from '../http/type-provider.ts'

const S = '/v1/spaces/:spaceId'

/** Spec "Objects" and "Data plane" (aggregate routes are another area). */
export function objectRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    // ------------------------------------------------------------ objects
    app.post(
      `${S}/objects`,
      { schema: { summary: 'Create an object with types and initial values', params: SpaceParams, body: ObjectCreateBody, response: { 201: ObjectCreated } } },
      async (request, reply) => {
        const objectId = await space(engine, request.params.spaceId).createObject(request.body)
        return reply.code(201).send({ objectId })
      },
    )

    app.post(
      `${S}/objects/batch`,
      {
        schema: {
          summary: 'Create many objects in one request (all or none; each entry as POST {S}/objects)',
          params: SpaceParams,
          body: ObjectBatchCreateBody,
          response: { 201: ObjectsCreated },
        },
      },
      async (request, reply) => {
        const objectIds = await space(engine, request.params.spaceId).createObjects(request.body.objects)
        return reply.code(201).send({ objectIds })
      },
    )

    app.post(
      `${S}/objects/query`,
      { schema: { summary: 'Query the object rows of a space', params: SpaceParams, body: ObjectsQueryBody, response: { 200: QueryResult } } },
      async (request) => {
        const t = types(engine, request.params.spaceId)
        const body = parseSnapshotBody(await t.objectQuery().body(request.body))
        return t.queryObjects(body.query, runQueryFair)
      },
    )

    liveRoute(
      root,
      `${S}/objects/query/subscribe`,
      {
        schema: {
          summary: 'Live object rows (SSE, windowed frames)',
          params: SpaceParams,
          body: ObjectsSubscribeBody,
          response: { 200: EventStream('ready, snapshot, changes, closed') },
        },
      },
      async (request, reply) => {
        const body = parseSubscribeBody(await types(engine, request.params.spaceId).objectQuery().body(request.body))
        const sp = space(engine, request.params.spaceId)
        await openLive(app, reply, body, objectsFeed(sp))
      },
    )

    app.delete(
      `${S}/objects/:objectId`,
      { schema: { summary: 'Delete an object (tombstone, then its tree)', params: ObjectParams, response: { 204: NoContent } } },
      async (request, reply) => {
        const { spaceId, objectId } = request.params
        const sp = space(engine, spaceId)
        await sp.deleteObject(objectId)
        return reply.code(204).send()
      },
    )

    app.get(
      `${S}/objects/:objectId/backlinks`,
      { schema: { summary: 'Objects whose relation values point here', params: ObjectParams, response: { 200: Backlinks } } },
      async (request) => {
        const { spaceId, objectId } = request.params
        const sp = space(engine, spaceId)
        return { backlinks: backlinks(sp, objectId) }
      },
    )

    // ------------------------------------------------------------ data plane
    app.post(`${S}/query`, { schema: { summary: "Query one object's dataset", params: SpaceParams, body: DataQueryBody, response: { 200: QueryResult } } }, async (request) => {
      const body = parseSnapshotBody(request.body, { perObject: true, requireDataset: true })
      const sp = space(engine, request.params.spaceId)
      return runQueryFair(await sp.datasetSourceFor(body.objectId as string, body.dataset as string, body.filter), body.query)
    })

    liveRoute(
      root,
      `${S}/query/subscribe`,
      {
        schema: {
          summary: "Live records of one object's dataset (SSE, windowed frames)",
          params: SpaceParams,
          body: DataSubscribeBody,
          response: { 200: EventStream('ready, snapshot, changes, closed') },
        },
      },
      async (request, reply) => {
        const body = parseSubscribeBody(request.body, { perObject: true, requireDataset: true })
        const sp = space(engine, request.params.spaceId)
        await openLive(app, reply, body, datasetFeed(sp, body.objectId as string, body.dataset as string))
      },
    )

    app.post(
      `${S}/modify`,
      {
        config: { unknownKeys: 'drop' },
        schema: { summary: 'Per-record ops in one change; dropped ops come back in rejections', params: SpaceParams, body: ModifyBody, response: { 200: WriteResult } },
      },
      async (request) => {
        const body = request.body
        const objectId = objectIdOf(body.objectId)
        return await types(engine, request.params.spaceId).modify({
          objectId,
          dataset: body.dataset,
          records: body.records,
          ...(body.traceIds ? { traceIds: body.traceIds } : {}),
          ...(body.scope ? { scope: body.scope } : {}),
        })
      },
    )

    app.post(
      `${S}/upsert`,
      { schema: { summary: 'Upsert records by caller-chosen id (idRule: user datasets)', params: SpaceParams, body: UpsertBody, response: { 200: UpsertResult } } },
      async (request) => {
        return await types(engine, request.params.spaceId).upsert(request.body)
      },
    )

    app.post(
      `${S}/delete-records`,
      { schema: { summary: 'Tombstone records of one dataset', params: SpaceParams, body: DeleteRecordsBody, response: { 200: WriteResult } } },
      async (request) => {
        const body = request.body
        const objectId = objectIdOf(body.objectId)
        return await types(engine, request.params.spaceId).deleteRecords({ objectId, dataset: body.dataset, recordIds: body.recordIds })
      },
    )
  }
}
