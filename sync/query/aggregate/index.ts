/**
 * Aggregation pipelines over JSON records: `$match $group $sort $limit $skip $project $unwind
 * $count`, bounded by `groupLimit`, `accumArrayLimit`, `memoryLimitBytes`. Pure (no Node
 * builtins). Vocabulary and semantics: ../README.md, section "Aggregate".
 */
export {
  checkAggregateLimits,
  compileAggregate,
  runAggregate,
  type AggregateBody,
  type AggregateLimits,
  type AggregatePlan,
  type AggregateRecord,
  type AggregateResult,
  type Candidates,
  type CompiledAggregate,
  type RunOptions,
} from './pipeline.ts'
export { AGGREGATE_FIELDS, DATA_PLANE_AGGREGATE_FIELDS, parseAggregateBody, type AggregateBodyOptions, type ParsedAggregateBody } from './body.ts'
export { HARD_MEMORY_LIMIT_BYTES, MAX_EXPRESSION_DEPTH, MAX_GROUP_FIELDS, MAX_STAGES, type LimitKind } from './errors.ts'
export { ACCUMULATORS, type AccumulatorOp } from './group.ts'
export { STAGES, type StageOp } from './stages.ts'
