import { Type, type TSchema } from '@sinclair/typebox'
import {
  DEFAULT_DRIFT_BUDGET_PERCENT,
  DEFAULT_MAILBOX_CAPACITY,
  DEFAULT_UPSERT_PAGE_SIZE,
  MAX_DRIFT_BUDGET_PERCENT,
  MAX_MAILBOX_CAPACITY,
  MAX_NAME_LENGTH,
  MAX_PATH_LENGTH,
  MAX_QUERY_LIMIT,
  MAX_RECORD_IDS_PER_DELETE,
  MAX_TRACE_IDS,
  MAX_UPSERT_PAGE_SIZE,
  MIN_MAILBOX_CAPACITY,
} from '../../sync/core/limits.ts'

/**
 * Query bodies (spec "Query body"). The schema is the strict outline (unknown keys are 400
 * `request.unknown_field`, wrong types 400 `request.invalid_field`); filters, sorts and
 * projections are compiled by the query engine (sync/query/body.ts, meaning only), which
 * answers `filter.unknown_operator`, `filter.invalid` and `object.id_required`. An explicit null on an
 * optional field means absent.
 */
const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

/** Any JSON object: a stored record or object row (serialized as is). */
export const Doc = Type.Object({}, { additionalProperties: true, description: 'record: its fields, `id` and `_ver`' })

const Filter = Type.Object({}, { additionalProperties: true, description: 'Mongo-style filter on dotted paths; instants as {$date}' })
const Projection = Type.Object({}, { additionalProperties: true, description: '{path: 1} (inclusion) or {path: 0} (exclusion)' })

/** Window fields every snapshot body has. */
export const WindowFields = {
  filter: Type.Optional(nullable(Filter)),
  sort: Type.Optional(nullable(Type.Array(Type.String(), { description: 'field names; prefix `-` for descending' }))),
  limit: Type.Optional(nullable(Type.Integer({ minimum: 0, maximum: MAX_QUERY_LIMIT, description: `at most ${MAX_QUERY_LIMIT}; always set it on a subscription` }))),
  offset: Type.Optional(nullable(Type.Integer({ minimum: 0 }))),
  includeTotal: Type.Optional(nullable(Type.Boolean({ description: 'adds `total` and `hasNext`' }))),
  projection: Type.Optional(nullable(Projection)),
}

/** Extra fields of a subscribe body. */
export const SubscribeFields = {
  mailboxCapacity: Type.Optional(
    nullable(Type.Integer({ minimum: MIN_MAILBOX_CAPACITY, maximum: MAX_MAILBOX_CAPACITY, description: `frames buffered for a slow reader; default ${DEFAULT_MAILBOX_CAPACITY}` })),
  ),
  driftBudgetPercent: Type.Optional(nullable(Type.Number({ minimum: 0, maximum: MAX_DRIFT_BUDGET_PERCENT, description: `default ${DEFAULT_DRIFT_BUDGET_PERCENT}` }))),
}

const PerObjectFields = {
  objectId: Type.Optional(nullable(Type.String({ description: 'required; null or missing is 400 object.id_required' }))),
  dataset: Type.Optional(nullable(Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'collection name (required)' }))),
}

const SpacesDataset = {
  dataset: Type.Optional(nullable(Type.Union([Type.Literal('spaces'), Type.Literal('profile')], { description: 'tech-space dataset; default spaces' }))),
}

const strict = { additionalProperties: false } as const

/** `POST {S}/objects/query`. */
export const ObjectsQueryBody = Type.Object(WindowFields, strict)
export const ObjectsSubscribeBody = Type.Object({ ...WindowFields, ...SubscribeFields }, strict)
/** `POST {S}/query`. */
export const DataQueryBody = Type.Object({ ...PerObjectFields, ...WindowFields }, strict)
export const DataSubscribeBody = Type.Object({ ...PerObjectFields, ...WindowFields, ...SubscribeFields }, strict)
/** `POST /v1/spaces/query`. */
export const SpacesQueryBody = Type.Object({ ...SpacesDataset, ...WindowFields }, strict)
export const SpacesSubscribeBody = Type.Object({ ...SpacesDataset, ...WindowFields, ...SubscribeFields }, strict)
/** `POST /v1/devices/query/subscribe`. */
export const DevicesSubscribeBody = Type.Object({ ...WindowFields, ...SubscribeFields }, strict)

export const QueryResult = Type.Object({
  records: Type.Array(Doc),
  total: Type.Optional(Type.Integer({ description: 'with includeTotal' })),
  hasNext: Type.Optional(Type.Boolean({ description: 'with includeTotal' })),
})

export const WriteRejection = Type.Object({ recordId: Type.String(), index: Type.Integer(), code: Type.String(), reason: Type.String() })

/** Spec "Write result". */
export const WriteResult = Type.Object({
  versionId: Type.String({ description: 'local DAG order of the change on this peer' }),
  changeId: Type.String({ description: 'content address of the change; the version-history handle' }),
  recordIds: Type.Array(Type.String(), { description: 'mirrors input order' }),
  rejections: Type.Optional(Type.Array(WriteRejection, { description: 'ops a handler dropped' })),
})

const UserOp = Type.Object(
  {
    type: Type.Union([Type.Literal('$set'), Type.Literal('$unset'), Type.Literal('$inc'), Type.Literal('$addToSet'), Type.Literal('$pull')]),
    path: Type.String({ maxLength: MAX_PATH_LENGTH, description: 'dotted path; empty string is the whole record value' }),
    value: Type.Optional(Type.Unknown()),
  },
  strict,
)

/** `POST {S}/modify`: unknown top-level keys are dropped (route config `unknownKeys: 'drop'`). */
export const ModifyBody = Type.Object({
  objectId: Type.Optional(nullable(Type.String({ description: 'required; null or missing is 400 object.id_required' }))),
  dataset: Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }),
  records: Type.Array(
    Type.Object(
      {
        id: Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }),
        upsert: Type.Optional(Type.Boolean({ description: 'accepted; a $set on a missing record creates it either way' })),
        ops: Type.Array(UserOp),
      },
      strict,
    ),
  ),
  traceIds: Type.Optional(Type.Array(Type.String({ maxLength: MAX_NAME_LENGTH }), { maxItems: MAX_TRACE_IDS })),
  scope: Type.Optional(
    Type.Union([Type.Literal('synced'), Type.Literal('local')], { description: 'local: device-local fields only (declared scope: local), stored on this device, never synced' }),
  ),
})

/** `POST {S}/upsert`: per-record screening is the engine's (rejections in the 200 response). */
export const UpsertBody = Type.Object(
  {
    objectId: Type.Optional(nullable(Type.String())),
    dataset: Type.Optional(nullable(Type.String())),
    records: Type.Array(Type.Unknown({ description: '{id, fields}' })),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_UPSERT_PAGE_SIZE, description: `records per change; default ${DEFAULT_UPSERT_PAGE_SIZE}` })),
    traceIds: Type.Optional(Type.Array(Type.String({ maxLength: MAX_NAME_LENGTH }), { maxItems: MAX_TRACE_IDS })),
  },
  strict,
)

export const UpsertResult = Type.Object({
  pages: Type.Array(WriteResult),
  created: Type.Integer(),
  updated: Type.Integer(),
  skipped: Type.Integer(),
  rejections: Type.Array(Type.Object({ index: Type.Integer(), id: Type.String(), code: Type.String(), reason: Type.String() })),
})

/** `POST {S}/delete-records`. */
export const DeleteRecordsBody = Type.Object(
  {
    objectId: Type.Optional(nullable(Type.String())),
    dataset: Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }),
    recordIds: Type.Array(Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }), { minItems: 1, maxItems: MAX_RECORD_IDS_PER_DELETE }),
  },
  strict,
)
