import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { parseAggregateBody, runAggregate } from '../../sync/query/index.ts'
import { SpaceParams } from '../schemas/spaces.ts'
import { space, types, type RouteHost } from './context.ts'
import { typed } from '../http/type-provider.ts'

// Bodies are parsed by the aggregate engine (the single source of its rules); the schema only
// names the fields for the OpenAPI document. Unknown top-level keys are dropped (spec Conventions 5).
const Limits = {
  groupLimit: Type.Optional(Type.Integer({ minimum: 1 })),
  accumArrayLimit: Type.Optional(Type.Integer({ minimum: 1 })),
  memoryLimitBytes: Type.Optional(Type.Integer({ minimum: 1 })),
  explain: Type.Optional(Type.Boolean()),
}
const ObjectsAggregateBody = Type.Object({ pipeline: Type.Any({ description: 'array of stages (docs/api.md "Aggregate")' }), ...Limits })
const DataAggregateBody = Type.Object({ objectId: Type.Any(), dataset: Type.Any(), pipeline: Type.Any(), ...Limits })

/** Deterministic input order on every replica: by `_ver.id`, then id. */
const stable = <T extends { id: string; _ver?: { id?: string } }>(docs: Iterable<T>): T[] => [...docs].sort((a, b) => cmp(a._ver?.id ?? '', b._ver?.id ?? '') || cmp(a.id, b.id))
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** `POST {S}/objects/aggregate` and `POST {S}/aggregate` (snapshot only). */
export function aggregateRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.post(
      '/v1/spaces/:spaceId/objects/aggregate',
      { config: { unknownKeys: 'drop' }, schema: { summary: 'Aggregate over the objects of a space', params: SpaceParams, body: ObjectsAggregateBody } },
      async (request) => {
        const raw = request.body as Record<string, unknown>
        const pipeline = await types(engine, request.params.spaceId).objectQuery().pipeline(raw.pipeline)
        const body = parseAggregateBody({ ...raw, pipeline })
        const sp = space(engine, request.params.spaceId)
        const docs = stable(sp.objectDocs())
        return body.explain ? { plan: body.aggregate.explain(docs) } : runAggregate(docs, body.aggregate)
      },
    )
    app.post(
      '/v1/spaces/:spaceId/aggregate',
      { config: { unknownKeys: 'drop' }, schema: { summary: "Aggregate over one object's dataset", params: SpaceParams, body: DataAggregateBody } },
      async (request) => {
        const body = parseAggregateBody(request.body, { perObject: true, requireDataset: true })
        const sp = space(engine, request.params.spaceId)
        const docs = stable(await sp.datasetDocs(body.objectId as string, body.dataset as string))
        return body.explain ? { plan: body.aggregate.explain(docs) } : runAggregate(docs, body.aggregate)
      },
    )
  }
}
