import { SvcError } from '../../core/errors.ts'

/**
 * Error helpers and bounds of the aggregation engine (spec `core.md`: Errors, Limits row
 * "aggregate bounds").
 *
 * - `aggregate.bad_pipeline` (400): `details.stage` is the index of the offending stage (null
 *   when the pipeline itself is not an array), `details.op` its operator when known, plus
 *   `field` / `accumulator` / `operator` / `max` where they help, and `cause` (`{code, details}`)
 *   when a query-engine error (filter, sort, projection) was wrapped.
 * - `aggregate.limit_exceeded` (400): `details.limit` is `group`, `accumArray` or `memory`,
 *   `details.max` the bound that was crossed, `details.stage` the stage that crossed it.
 */

/** Most stages in one pipeline. */
export const MAX_STAGES = 64
/** Deepest nesting of object/array expressions. */
export const MAX_EXPRESSION_DEPTH = 32
/** Most accumulator fields in one `$group`. */
export const MAX_GROUP_FIELDS = 128
/**
 * The one bound that always applies: the memory estimate of blocking stages may never exceed
 * 256 MiB, whatever `memoryLimitBytes` says (a larger value is clamped). It also bounds the
 * number of groups and accumulated array elements, which are charged to the estimate.
 */
export const HARD_MEMORY_LIMIT_BYTES = 256 * 1024 * 1024

export type LimitKind = 'group' | 'accumArray' | 'memory'

export function badPipeline(message: string, stage: number | null, extra?: Record<string, unknown>): SvcError {
  return new SvcError('aggregate.bad_pipeline', message, { stage, ...extra })
}

export function limitExceeded(limit: LimitKind, max: number, stage: number, extra?: Record<string, unknown>): SvcError {
  const what = limit === 'group' ? 'distinct groups' : limit === 'accumArray' ? 'accumulated array elements' : 'bytes held by blocking stages'
  return new SvcError('aggregate.limit_exceeded', `aggregate limit exceeded: more than ${max} ${what}`, { limit, max, stage, ...extra })
}

/** Runs `fn`, turning a query-engine SvcError into `aggregate.bad_pipeline` for stage `stage`. */
export function wrapped<T>(stage: number, op: string, fn: () => T): T {
  try {
    return fn()
  } catch (err) {
    if (err instanceof SvcError && err.code !== 'aggregate.bad_pipeline') {
      throw badPipeline(`${op}: ${err.message}`, stage, { op, cause: { code: err.code, details: err.details ?? {} } })
    }
    throw err
  }
}

/**
 * Memory estimate of one run, shared by its blocking stages. `charge` adds bytes and throws
 * `aggregate.limit_exceeded` (`limit: 'memory'`) once the total passes the bound.
 */
export class Budget {
  used = 0
  constructor(
    readonly max: number,
    /** True when `max` is the hard cap rather than a caller's `memoryLimitBytes`. */
    readonly hard: boolean,
  ) {}

  charge(bytes: number, stage: number): void {
    if ((this.used += bytes) > this.max) {
      throw limitExceeded('memory', this.max, stage, this.hard ? { hardCap: true } : undefined)
    }
  }

  release(bytes: number): void {
    this.used -= bytes
  }
}
