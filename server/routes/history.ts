import { Type } from '@sinclair/typebox'
import { DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT } from '../../sync/core/limits.ts'
import type { FastifyInstance } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'
import { ROW_ALIAS, unaliasRow, type History } from '../../sync/space/history.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import { Id } from '../schemas/spaces.ts'
import { space, type RouteHost } from './context.ts'
import { typed } from '../http/type-provider.ts'

const O = '/v1/spaces/:spaceId/objects/:objectId'
const ObjectParams = Type.Object({ spaceId: Id('space id'), objectId: Id('object id') })
const VersionParams = Type.Object({ spaceId: Id('space id'), objectId: Id('object id'), version: Id('a change id') })
const RecordParams = Type.Object({
  spaceId: Id('space id'),
  objectId: Id('object id'),
  version: Id('a change id'),
  dataset: Id(`dataset; ${ROW_ALIAS} for the object's own fields (listed as "")`),
  recordId: Id(`record id; ${ROW_ALIAS} for the object's own row (listed as "")`),
})
const ListQuery = Type.Object(
  {
    dataset: Type.Optional(Type.String()),
    recordId: Type.Optional(Type.String()),
    traceId: Type.Optional(Type.String()),
    author: Type.Optional(Type.String()),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: `default ${DEFAULT_HISTORY_LIMIT}; a larger value than ${MAX_HISTORY_LIMIT} is capped at ${MAX_HISTORY_LIMIT}` })),
    cursor: Type.Optional(Type.String()),
    coalesce: Type.Optional(Type.Boolean()),
    coalesceWindow: Type.Optional(Type.Integer({ minimum: 0, description: 'milliseconds; default 60000' })),
  },
  { additionalProperties: false },
)
const DiffQuery = Type.Object(
  {
    version: Type.String({ minLength: 1 }),
    base: Type.Optional(Type.String()),
    dataset: Type.Optional(Type.String()),
    recordIds: Type.Optional(Type.String({ description: 'comma-separated' })),
  },
  { additionalProperties: false },
)
const ViewQuery = Type.Object({ dataset: Type.Optional(Type.String()) }, { additionalProperties: false })

function historyOf(sp: SpaceEngine, objectId: string): History {
  sp.requireObject(objectId)
  return sp.services.history
}

/** Spec "Version history": a version is a change id; a module's dataset may keep none (chat_messages). */
export function historyRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.get(`${O}/history`, { schema: { summary: "An object's changes, newest first", params: ObjectParams, querystring: ListQuery } }, async (request) => {
      const { spaceId, objectId } = request.params
      const q = request.query
      return historyOf(space(engine, spaceId), objectId).list(objectId, {
        ...(q.dataset !== undefined ? { dataset: unaliasRow(String(q.dataset)) } : {}),
        ...(q.recordId !== undefined ? { recordId: unaliasRow(String(q.recordId)) } : {}),
        ...(q.traceId !== undefined ? { traceId: String(q.traceId) } : {}),
        ...(q.author !== undefined ? { author: String(q.author) } : {}),
        ...(q.limit !== undefined ? { limit: Number(q.limit) } : {}),
        ...(q.cursor !== undefined ? { cursor: String(q.cursor) } : {}),
        ...(q.coalesce !== undefined ? { coalesce: q.coalesce === true } : {}),
        ...(q.coalesceWindow !== undefined ? { coalesceWindowMs: Number(q.coalesceWindow) } : {}),
      })
    })
    app.get(
      `${O}/history/diff`,
      { schema: { summary: 'What a version changed (against its parents or `base`)', params: ObjectParams, querystring: DiffQuery } },
      async (request) => {
        const { spaceId, objectId } = request.params
        const q = request.query
        return historyOf(space(engine, spaceId), objectId).diff(objectId, q.version, {
          ...(q.base !== undefined ? { base: q.base } : {}),
          ...(q.dataset !== undefined ? { dataset: unaliasRow(q.dataset) } : {}),
          ...(q.recordIds !== undefined ? { recordIds: q.recordIds.split(',').filter(Boolean).map(unaliasRow) } : {}),
        })
      },
    )
    app.get(`${O}/history/:version`, { schema: { summary: 'State of the object at a version, by dataset', params: VersionParams, querystring: ViewQuery } }, async (request) => {
      const { spaceId, objectId, version } = request.params
      const { dataset } = request.query
      return { version, datasets: await historyOf(space(engine, spaceId), objectId).view(objectId, version, dataset === undefined ? undefined : unaliasRow(dataset)) }
    })
    app.get(`${O}/history/:version/datasets/:dataset/records/:recordId`, { schema: { summary: 'One record at a version', params: RecordParams } }, async (request) => {
      const { spaceId, objectId, version } = request.params
      const dataset = unaliasRow(request.params.dataset)
      const recordId = unaliasRow(request.params.recordId)
      const history = historyOf(space(engine, spaceId), objectId)
      if (!history.keeps(dataset)) throw new SvcError('history.version_not_found', 'this dataset keeps no history (chat messages)', { version, dataset })
      return history.recordAt(objectId, version, dataset, recordId)
    })
  }
}
