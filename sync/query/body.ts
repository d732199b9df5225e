import { SvcError } from '../core/errors.ts'
import type { FilterDoc } from './filter.ts'
import { checkDriftBudget } from './live.ts'
import { checkMailboxCapacity } from './mailbox.ts'
import { type CompiledQuery, compileQuery } from './snapshot.ts'
import { isPlainObject } from './values.ts'

/**
 * Validation of the snapshot and subscribe bodies (spec: Query body). Returns typed values
 * with the query compiled, so every error surfaces before a stream opens:
 *
 * - not a JSON object: 400 `request.schema`;
 * - unknown top-level key: 400 `request.unknown_field` (`details.fields`, `details.accepted`);
 * - per-object endpoints (`perObject: true`): a missing objectId or a serialized nil (JSON
 *   null, '', 'None', 'null', 'undefined', 'nil') is 400 `object.id_required`; a serialized
 *   nil string is refused on every endpoint;
 * - wrong type or range: 400 `request.invalid_field` (`details.field`); `requireDataset` and no
 *   dataset: 400 `request.missing_field` (`details.field`);
 * - filter problems: 400 `filter.unknown_operator` / `filter.invalid`.
 *
 * An explicit null on an optional field means "absent" (clients that serialize unset options
 * as null keep working); on objectId it is the nil the spec names.
 */

export const SNAPSHOT_FIELDS = ['objectId', 'dataset', 'filter', 'sort', 'limit', 'offset', 'includeTotal', 'projection'] as const
export const SUBSCRIBE_FIELDS = [...SNAPSHOT_FIELDS, 'mailboxCapacity', 'driftBudgetPercent'] as const

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

export function parseSnapshotBody(raw: unknown, options: QueryBodyOptions = {}): QueryBody {
  return parse(raw, options, SNAPSHOT_FIELDS)
}

export function parseSubscribeBody(raw: unknown, options: QueryBodyOptions = {}): SubscribeBody {
  const body = parse(raw, options, SUBSCRIBE_FIELDS) as SubscribeBody
  const r = raw as Record<string, unknown>
  body.mailboxCapacity = checkMailboxCapacity(r.mailboxCapacity)
  body.driftBudgetPercent = checkDriftBudget(r.driftBudgetPercent)
  return body
}

function parse(raw: unknown, options: QueryBodyOptions, accepted: readonly string[]): QueryBody {
  if (!isPlainObject(raw)) throw new SvcError('request.schema', 'body must be a JSON object')
  const unknown = Object.keys(raw).filter((k) => !accepted.includes(k))
  if (unknown.length > 0) {
    throw new SvcError('request.unknown_field', `unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, {
      fields: unknown,
      accepted: [...accepted],
    })
  }

  const { objectId, dataset } = parseTarget(raw, options)

  const filter = raw.filter
  if (filter !== undefined && filter !== null && !isPlainObject(filter)) throw invalidField('filter', 'filter must be an object')
  const projection = raw.projection
  if (projection !== undefined && projection !== null && !isPlainObject(projection)) {
    throw invalidField('projection', 'projection must be an object')
  }
  const sort = raw.sort
  if (sort !== undefined && sort !== null && !(Array.isArray(sort) && sort.every((s) => typeof s === 'string'))) {
    throw invalidField('sort', 'sort must be an array of field names')
  }
  for (const f of ['limit', 'offset'] as const) {
    const v = raw[f]
    if (v !== undefined && v !== null && typeof v !== 'number') throw invalidField(f, `${f} must be an integer`)
  }

  const query = compileQuery({
    filter,
    sort,
    limit: (raw.limit ?? undefined) as number | undefined,
    offset: (raw.offset ?? undefined) as number | undefined,
    includeTotal: (raw.includeTotal ?? undefined) as boolean | undefined,
    projection,
  })

  const body: QueryBody = { offset: query.offset, includeTotal: query.includeTotal, query }
  if (typeof objectId === 'string') body.objectId = objectId
  if (typeof dataset === 'string') body.dataset = dataset
  if (isPlainObject(filter)) body.filter = filter
  if (Array.isArray(sort)) body.sort = sort as string[]
  if (query.limit !== undefined) body.limit = query.limit
  if (isPlainObject(projection)) body.projection = projection as Record<string, 0 | 1 | boolean>
  return body
}
