import { SvcError } from '../../core/errors.ts'
import type { CompiledFilter } from '../filter.ts'
import { candidatesFor } from '../snapshot.ts'
import { isQuerySource, type QuerySource } from '../source.ts'
import { badPipeline, Budget, HARD_MEMORY_LIMIT_BYTES, MAX_STAGES } from './errors.ts'
import type { Sink } from './group.ts'
import { compileStage, MatchStage, type Rec, type RunContext, SliceStage, SortStage, type StageDef } from './stages.ts'

/**
 * Aggregation pipelines over an iterable of JSON records (spec `core.md`: `POST
 * {S}/objects/aggregate`, `POST {S}/aggregate`). Compile once with {@link compileAggregate},
 * run many times; {@link runAggregate} does both for a request body. Pure: no I/O, no Node
 * builtins. Records flow in source order; results may share structure with the inputs (never
 * mutated). Vocabulary and semantics: README.md, section "Aggregate".
 */

export interface AggregateLimits {
  /** Most distinct groups one `$group` may create. */
  groupLimit?: number
  /** Most elements in one `$push` / `$addToSet` array. */
  accumArrayLimit?: number
  /** Most estimated bytes held at once by the blocking stages (`$group`, `$sort`). */
  memoryLimitBytes?: number
}

export interface AggregateBody extends AggregateLimits {
  pipeline: unknown
  explain?: boolean
}

export type AggregateRecord = Record<string, unknown>

export type AggregateResult = { records: AggregateRecord[] } | { plan: AggregatePlan }

/** Candidates for the leading `$match`, from the caller's index (see `CompiledAggregate.leadingMatch`). */
export interface Candidates {
  docs: Iterable<object>
  /** True when the candidates are exactly the documents the leading `$match` accepts. */
  exact: boolean
}

export interface RunOptions {
  /**
   * Index hook: the documents the leading `$match` may accept (a superset of its matches unless
   * `exact`). Callers with their own index compute them from `leadingMatch.hints`; a
   * {@link QuerySource} source (e.g. InMemoryIndex) is consulted automatically.
   */
  candidates?: Candidates
}

export interface AggregatePlan {
  stages: Array<{ stage: number; op: string; blocking: boolean } & Record<string, unknown>>
  limits: {
    groupLimit: number | null
    accumArrayLimit: number | null
    memoryLimitBytes: number | null
    hardMemoryLimitBytes: number
  }
  /**
   * The leading `$match`'s index use: `paths` with equality constraints an index can answer,
   * `used` when the given source (or candidates) narrowed the scan, `exact` when the filter
   * need not be re-applied, `candidates` (documents visited) and `size` (of a QuerySource). Null when the pipeline does not start with a `$match`.
   */
  index: { stage: 0; paths: string[]; used: boolean; exact?: boolean; candidates?: number; size?: number } | null
}

export interface CompiledAggregate {
  readonly compiled: 'aggregate'
  readonly stages: readonly StageDef[]
  readonly limits: Readonly<AggregateLimits>
  /** The filter of a leading `$match` (its `hints` are the index hook's equality constraints). */
  readonly leadingMatch: CompiledFilter | undefined
  /** Runs the pipeline. Throws `aggregate.limit_exceeded` on a breached bound. */
  run(source: Iterable<object> | QuerySource, options?: RunOptions): AggregateRecord[]
  /** The plan (does not scan; with a QuerySource it counts the leading `$match` candidates). */
  explain(source?: Iterable<object> | QuerySource, options?: RunOptions): AggregatePlan
}

const LIMIT_FIELDS = ['groupLimit', 'accumArrayLimit', 'memoryLimitBytes'] as const

function checkLimit(field: string, v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
    throw new SvcError('request.invalid_field', `${field} must be a positive integer`, { field })
  }
  return v
}

/** Validates limits: positive safe integers; absent or null means unbounded (hard cap aside). */
export function checkAggregateLimits(raw: Record<string, unknown>): AggregateLimits {
  const out: AggregateLimits = {}
  for (const f of LIMIT_FIELDS) {
    const v = checkLimit(f, raw[f])
    if (v !== undefined) out[f] = v
  }
  return out
}

/**
 * Compiles a pipeline once. Throws 400 `aggregate.bad_pipeline` (`details.stage`) for a
 * non-array pipeline, more than {@link MAX_STAGES} stages, an unknown or malformed stage, an
 * unknown accumulator or expression operator; 400 `request.invalid_field` for a bad limit.
 */
export function compileAggregate(pipeline: unknown, limits: AggregateLimits = {}): CompiledAggregate {
  const lim = checkAggregateLimits(limits as Record<string, unknown>)
  if (!Array.isArray(pipeline)) throw badPipeline('pipeline must be an array of stages', null)
  if (pipeline.length > MAX_STAGES) {
    throw badPipeline(`a pipeline has at most ${MAX_STAGES} stages`, MAX_STAGES, { max: MAX_STAGES })
  }
  const stages = pipeline.map((raw, i) => compileStage(raw, i))
  // $sort followed by $skip/$limit keeps only the first skip + limit entries (bounded heap).
  for (let i = 0; i < stages.length; i++) {
    const st = stages[i]
    if (!(st instanceof SortStage)) continue
    let skip = 0
    for (let j = i + 1; j < stages.length; j++) {
      const nx = stages[j]
      if (!(nx instanceof SliceStage)) break
      if (nx.op === '$skip') skip += nx.n
      else st.bound = Math.min(st.bound, skip + nx.n)
    }
  }
  const first = stages[0]
  const leadingMatch = first instanceof MatchStage ? first.filter : undefined
  return {
    compiled: 'aggregate',
    stages,
    limits: lim,
    leadingMatch,
    run: (source, options) => execute(stages, lim, leadingMatch, source, options),
    explain: (source, options) => explain(stages, lim, leadingMatch, source, options),
  }
}

const isCompiled = (b: unknown): b is CompiledAggregate => (b as CompiledAggregate)?.compiled === 'aggregate'

/** Compiles (unless given a compiled pipeline) and runs, or explains when `explain: true`. */
export function runAggregate(source: Iterable<object> | QuerySource, body: AggregateBody | CompiledAggregate, options?: RunOptions & { explain?: boolean }): AggregateResult {
  const compiled = isCompiled(body) ? body : compileAggregate(body.pipeline, body)
  const wantPlan = options?.explain ?? (!isCompiled(body) && body.explain === true)
  if (wantPlan) return { plan: compiled.explain(source, options) }
  return { records: compiled.run(source, options) }
}

class Collector implements Sink {
  constructor(readonly out: Rec[]) {}
  push(doc: Rec): boolean {
    this.out.push(doc)
    return true
  }
  end(): void {}
}

function narrow(leadingMatch: CompiledFilter | undefined, source: Iterable<object> | QuerySource | undefined, options: RunOptions | undefined): Candidates | undefined {
  if (!leadingMatch || leadingMatch.matchesAll) return undefined
  if (options?.candidates) return options.candidates
  if (source && isQuerySource(source)) return candidatesFor(source, leadingMatch)
  return undefined
}

function execute(
  stages: readonly StageDef[],
  lim: AggregateLimits,
  leadingMatch: CompiledFilter | undefined,
  source: Iterable<object> | QuerySource,
  options: RunOptions | undefined,
): AggregateRecord[] {
  const memory = lim.memoryLimitBytes
  const ctx: RunContext = {
    groupLimit: lim.groupLimit ?? Infinity,
    accumArrayLimit: lim.accumArrayLimit ?? Infinity,
    budget: memory !== undefined && memory <= HARD_MEMORY_LIMIT_BYTES ? new Budget(memory, false) : new Budget(HARD_MEMORY_LIMIT_BYTES, true),
  }
  const out: Rec[] = []
  let docs: Iterable<object> = source
  let from = 0
  const cands = narrow(leadingMatch, source, options)
  if (cands) {
    docs = cands.docs
    if (cands.exact) from = 1
  }
  let head: Sink = new Collector(out)
  for (let i = stages.length - 1; i >= from; i--) head = stages[i].sink(head, ctx)
  feed(docs, head)
  head.end()
  return out
}

/** Pushes every document until the chain declines; arrays by index (monomorphic loop). */
function feed(docs: Iterable<object>, head: Sink): void {
  if (Array.isArray(docs)) {
    if (head.pushAll) {
      head.pushAll(docs as Rec[])
      return
    }
    for (let i = 0; i < docs.length; i++) if (!head.push(docs[i] as Rec)) return
    return
  }
  for (const d of docs) if (!head.push(d as Rec)) return
}

function explain(
  stages: readonly StageDef[],
  lim: AggregateLimits,
  leadingMatch: CompiledFilter | undefined,
  source: Iterable<object> | QuerySource | undefined,
  options: RunOptions | undefined,
): AggregatePlan {
  const plan: AggregatePlan = {
    stages: stages.map((s) => ({ stage: s.index, op: s.op, blocking: s.blocking, ...s.describe() })),
    limits: {
      groupLimit: lim.groupLimit ?? null,
      accumArrayLimit: lim.accumArrayLimit ?? null,
      memoryLimitBytes: lim.memoryLimitBytes === undefined ? null : Math.min(lim.memoryLimitBytes, HARD_MEMORY_LIMIT_BYTES),
      hardMemoryLimitBytes: HARD_MEMORY_LIMIT_BYTES,
    },
    index: null,
  }
  if (leadingMatch) {
    const index: NonNullable<AggregatePlan['index']> = { stage: 0, paths: [...new Set(leadingMatch.hints.map((h) => h.path))], used: false }
    const cands = narrow(leadingMatch, source, options)
    if (cands) {
      index.used = true
      index.exact = cands.exact
      let n = 0
      for (const _ of cands.docs as Iterable<unknown>) n++
      index.candidates = n
    }
    if (source && isQuerySource(source)) index.size = source.size
    plan.index = index
  }
  return plan
}
