import { SvcError } from '../../core/errors.ts'
import { isPlainObject } from '../values.ts'
import { parseTarget } from '../body.ts'
import { badPipeline } from './errors.ts'
import { type AggregateLimits, checkAggregateLimits, type CompiledAggregate, compileAggregate } from './pipeline.ts'

/**
 * Validation of the aggregate bodies: `{pipeline, groupLimit?, accumArrayLimit?,
 * memoryLimitBytes?, explain?}` (`POST {S}/objects/aggregate`) and the same plus `objectId`,
 * `dataset` (`POST {S}/aggregate`). Unknown top-level keys are ignored (the spec lets
 * `/aggregate` drop them; a strict route checks {@link AGGREGATE_FIELDS} itself).
 *
 * - not a JSON object: 400 `request.schema`;
 * - `pipeline` missing or not an array, or any pipeline fault: 400 `aggregate.bad_pipeline`;
 * - a limit that is not a positive integer, `explain` not a boolean, `objectId` / `dataset`
 *   not a string: 400 `request.invalid_field` (`details.field`); explicit null means absent;
 * - `perObject` and no objectId (or a serialized nil): 400 `object.id_required`;
 *   `requireDataset` and no dataset: 400 `request.missing_field`.
 */

export const AGGREGATE_FIELDS = ['pipeline', 'groupLimit', 'accumArrayLimit', 'memoryLimitBytes', 'explain'] as const
export const DATA_PLANE_AGGREGATE_FIELDS = ['objectId', 'dataset', ...AGGREGATE_FIELDS] as const

export interface AggregateBodyOptions {
  perObject?: boolean
  requireDataset?: boolean
}

export interface ParsedAggregateBody {
  objectId?: string
  dataset?: string
  explain: boolean
  limits: AggregateLimits
  /** The compiled pipeline: `aggregate.run(docs)` / `aggregate.explain(source)`. */
  aggregate: CompiledAggregate
}

const invalidField = (field: string, message: string) => new SvcError('request.invalid_field', message, { field })

export function parseAggregateBody(raw: unknown, options: AggregateBodyOptions = {}): ParsedAggregateBody {
  if (!isPlainObject(raw)) throw new SvcError('request.schema', 'body must be a JSON object')
  const { objectId, dataset } = parseTarget(raw, options)
  const explain = raw.explain ?? false
  if (typeof explain !== 'boolean') throw invalidField('explain', 'explain must be a boolean')
  if (raw.pipeline === undefined || raw.pipeline === null) throw badPipeline('pipeline is required', null)
  const limits = checkAggregateLimits(raw)
  const aggregate = compileAggregate(raw.pipeline, limits)
  const out: ParsedAggregateBody = { explain, limits, aggregate }
  if (typeof objectId === 'string') out.objectId = objectId
  if (typeof dataset === 'string') out.dataset = dataset
  return out
}
