/**
 * Query engine: Mongo-style filters, sort, projection, pagination, live windows and
 * subscriber mailboxes over plain JSON records. Pure and storage-agnostic (runs in browsers).
 * See README.md in this folder for the semantics and design choices.
 */
export { compileFilter, FILTER_LIMITS, foldText, type CompiledFilter, type EqualityHint, type FilterDoc, type TextMatchProvider } from './filter.ts'
export { compileSort, MAX_SORT_KEYS, TopK, type CompiledSort, type Entry, type SortField } from './sort.ts'
export { compileProjection, MAX_PROJECTION_PATHS, type FrameOp, type Projection } from './projection.ts'
export { InMemoryIndex, isQuerySource, type AutoIndexOptions, type QuerySource } from './source.ts'
export {
  candidatesFor,
  type IndexCandidates,
  compileQuery,
  MAX_LIMIT,
  runQuery,
  runQuerySteps,
  drain,
  STEP_DOCS,
  type Steps,
  select,
  type CompiledQuery,
  type QueryOptions,
  type QueryResult,
  type Selection,
} from './snapshot.ts'
export {
  checkDriftBudget,
  DEFAULT_DRIFT_BUDGET_PERCENT,
  LiveWindow,
  MIN_RESERVE,
  type ChangeSet,
  type ChangesFrame,
  type FrameEntry,
  type LiveWindowOptions,
  type RemoveReason,
} from './live.ts'
export { checkMailboxCapacity, DEFAULT_MAILBOX_CAPACITY, Mailbox, MAX_MAILBOX_CAPACITY, MIN_MAILBOX_CAPACITY, type PushResult } from './mailbox.ts'
export { parseSnapshotBody, parseSubscribeBody, SNAPSHOT_FIELDS, SUBSCRIBE_FIELDS, type QueryBody, type QueryBodyOptions, type SubscribeBody } from './body.ts'
export { compareValues, instantOf, isDateWrapper, parseInstant, Rank, rankOf, valuesEqual, type Doc, type Scalar } from './values.ts'
export * from './aggregate/index.ts'
