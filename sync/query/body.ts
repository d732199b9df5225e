import { SvcError } from '../core/errors.ts'
import { DEFAULT_DRIFT_BUDGET_PERCENT, DEFAULT_MAILBOX_CAPACITY } from '../core/limits.ts'
import type { FilterDoc } from './filter.ts'
import { type CompiledQuery, compileQuery } from './snapshot.ts'

/**
 * The snapshot and subscribe bodies (spec: Query body), read for their meaning. Their shape
 * (an object, no unknown key, each field's type and range) is the request schema's job
 * (server/schemas/query.ts, answered 400 `request.unknown_field` / `request.invalid_field`
 * before a route runs); what is left here needs the endpoint or the query engine:
 *
 * - per-object endpoints (`perObject: true`): a missing objectId or a serialized nil (JSON
 *   null, '', 'None', 'null', 'undefined', 'nil') is 400 `object.id_required`; a serialized
 *   nil string is refused on every endpoint;
 * - `requireDataset` and no dataset: 400 `request.missing_field` (`details.field`);
 * - filters, sorts and projections compile: 400 `filter.unknown_operator` / `filter.invalid` /
 *   `request.invalid_field`;
 * - an explicit null on an optional field means "absent" (clients that serialize unset options
 *   as null keep working), and absent subscribe options take the spec's defaults.
 *
 * Every error surfaces before a stream opens.
 */

export const SNAPSHOT_FIELDS = ['objectId', 'dataset', 'filter', 'sort', 'limit', 'offset', 'includeTotal', 'projection'] as const
export const SUBSCRIBE_FIELDS = [...SNAPSHOT_FIELDS, 'mailboxCapacity', 'driftBudgetPercent'] as const

/** A snapshot body as the schema admits it. */
export interface QueryBodyInput {
  objectId?: string | null
  dataset?: string | null
  filter?: FilterDoc | null
  sort?: string[] | null
  limit?: number | null
  offset?: number | null
  includeTotal?: boolean | null
  projection?: Record<string, unknown> | null
}

/** A subscribe body as the schema admits it. */
export interface SubscribeBodyInput extends QueryBodyInput {
  mailboxCapacity?: number | null
  driftBudgetPercent?: number | null
}

export interface QueryBodyOptions {
  /** A per-object endpoint: objectId is required. */
  perObject?: boolean
  /** The endpoint needs a dataset name. */
  requireDataset?: boolean
}

export interface QueryBody {
  objectId?: string
  dataset?: string
  filter?: FilterDoc
  sort?: string[]
  limit?: number
  offset: number
  includeTotal: boolean
  projection?: Record<string, 0 | 1 | boolean>
  /** The compiled filter, sort, projection and page, ready for runQuery / LiveWindow. */
  query: CompiledQuery
}

export interface SubscribeBody extends QueryBody {
  mailboxCapacity: number
  driftBudgetPercent: number
}

const NIL_STRINGS = new Set(['', 'None', 'null', 'undefined', 'nil'])

const invalidField = (field: string, message: string) => new SvcError('request.invalid_field', message, { field })

/** The objectId of a per-object body: missing or a serialized nil is 400 `object.id_required`. */
export function requireObjectId(v: string | null | undefined): string {
  if (v === undefined || v === null || NIL_STRINGS.has(v.trim())) throw new SvcError('object.id_required', 'objectId is required')
  return v
}

/**
 * `objectId` and `dataset` of a query or aggregate body: a missing or serialized-nil objectId
 * on a per-object endpoint is 400 `object.id_required` (spec "Query body").
 */
export function parseTarget(raw: Record<string, unknown>, options: { perObject?: boolean; requireDataset?: boolean }): { objectId: unknown; dataset: unknown } {
  const objectId = raw.objectId
  if (options.perObject && (objectId === undefined || objectId === null)) {
    throw new SvcError('object.id_required', 'objectId is required')
  }
  if (objectId !== undefined && objectId !== null) {
    if (typeof objectId !== 'string') throw invalidField('objectId', 'objectId must be a string')
    requireObjectId(objectId)
  }
  const dataset = raw.dataset
  if (dataset === undefined || dataset === null) {
    if (options.requireDataset) throw new SvcError('request.missing_field', 'dataset is required', { field: 'dataset' })
  } else if (typeof dataset !== 'string' || dataset.length === 0) {
    throw invalidField('dataset', 'dataset must be a non-empty string')
  }
  return { objectId, dataset }
}

export function parseSnapshotBody(raw: QueryBodyInput, options: QueryBodyOptions = {}): QueryBody {
  const objectId = raw.objectId ?? undefined
  if (options.perObject || objectId !== undefined) requireObjectId(objectId)
  const dataset = raw.dataset ?? undefined
  if (dataset === undefined && options.requireDataset) throw new SvcError('request.missing_field', 'dataset is required', { field: 'dataset' })
  const filter = raw.filter ?? undefined
  const sort = raw.sort ?? undefined
  const projection = raw.projection ?? undefined

  const query = compileQuery({
    filter,
    sort,
    limit: raw.limit ?? undefined,
    offset: raw.offset ?? undefined,
    includeTotal: raw.includeTotal ?? undefined,
    projection,
  })

  const body: QueryBody = { offset: query.offset, includeTotal: query.includeTotal, query }
  if (objectId !== undefined) body.objectId = objectId
  if (dataset !== undefined) body.dataset = dataset
  if (filter !== undefined) body.filter = filter
  if (sort !== undefined) body.sort = sort
  if (query.limit !== undefined) body.limit = query.limit
  if (projection !== undefined) body.projection = projection as Record<string, 0 | 1 | boolean>
  return body
}

export function parseSubscribeBody(raw: SubscribeBodyInput, options: QueryBodyOptions = {}): SubscribeBody {
  return {
    ...parseSnapshotBody(raw, options),
    mailboxCapacity: raw.mailboxCapacity ?? DEFAULT_MAILBOX_CAPACITY,
    driftBudgetPercent: raw.driftBudgetPercent ?? DEFAULT_DRIFT_BUDGET_PERCENT,
  }
}
