import { SvcError } from '../core/errors.ts'
import { MAX_QUERY_LIMIT } from '../core/limits.ts'
import { type CompiledFilter, compileFilter, type EqualityHint } from './filter.ts'
import { compileProjection, type Projection } from './projection.ts'
import { type CompiledSort, compileSort, type Entry, TopK } from './sort.ts'
import type { SortedIndex } from './sorted-index.ts'
import { isQuerySource, type QuerySource } from './source.ts'
import type { Doc } from './values.ts'

/**
 * Snapshot queries: filter, sort, offset/limit, includeTotal, projection over any iterable of
 * documents, or a QuerySource whose equality indexes narrow the candidates.
 *
 * Limits: `limit` and `offset` are non-negative safe integers; `limit` is at most
 * {@link MAX_LIMIT} (10,000). No `limit` means every match after `offset` (callers serving the
 * network should always pass one); `limit: 0` returns no records (useful with includeTotal).
 * `total` (the number of matches) and `hasNext` (matches beyond offset + limit) come only with
 * `includeTotal`.
 *
 * Cost: one pass over the candidates with a bounded heap of offset + limit entries, so
 * O(n log(offset + limit)) time and O(offset + limit) memory; no full sort. A source that
 * keeps the query's sort order (InMemoryIndex with `autoSort`) serves an unfiltered page in
 * O(offset / 512 + limit), and a filtered one by testing documents in order until the page
 * is full (the rest only when `includeTotal` asks for the count).
 */

/** Largest `limit` (the one constant lives in core/limits.ts). */
export const MAX_LIMIT = MAX_QUERY_LIMIT

export interface QueryOptions {
  filter?: unknown
  sort?: unknown
  limit?: number
  offset?: number
  includeTotal?: boolean
  projection?: unknown
}

export interface QueryResult {
  records: Doc[]
  total?: number
  hasNext?: boolean
}

export interface CompiledQuery {
  readonly compiled: true
  readonly filter: CompiledFilter
  readonly sort: CompiledSort
  readonly projection: Projection
  readonly limit: number | undefined
  readonly offset: number
  readonly includeTotal: boolean
}

const badField = (field: string, message: string) => new SvcError('request.invalid_field', message, { field })

export function checkCount(field: 'limit' | 'offset', v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw badField(field, `${field} must be a non-negative integer`)
  if (field === 'limit' && v > MAX_LIMIT) throw badField(field, `limit is at most ${MAX_LIMIT}`)
  return v
}

/** Validates and compiles a query once; pass the result to runQuery/LiveWindow repeatedly. */
export function compileQuery(q: QueryOptions | CompiledQuery): CompiledQuery {
  if ((q as CompiledQuery).compiled === true) return q as CompiledQuery
  const o = q as QueryOptions
  if (o.includeTotal !== undefined && o.includeTotal !== null && typeof o.includeTotal !== 'boolean') {
    throw badField('includeTotal', 'includeTotal must be a boolean')
  }
  return {
    compiled: true,
    filter: compileFilter(o.filter),
    sort: compileSort(o.sort),
    projection: compileProjection(o.projection),
    limit: checkCount('limit', o.limit),
    offset: checkCount('offset', o.offset) ?? 0,
    includeTotal: o.includeTotal === true,
  }
}

export interface Selection {
  /** The best `k` matches, sorted. */
  top: Entry[]
  /** Number of matches. */
  total: number
  /** True when an index narrowed the scan. */
  indexed: boolean
  /** How a document-level `$text` was answered, when the filter has one. */
  textVia?: 'index' | 'scan'
}

/** What an index narrowed a query to. */
export interface IndexCandidates {
  /** A superset of the matches (every match is in it). */
  docs: Iterable<Doc>
  /** True when `docs` are exactly the matches (nothing left to test). */
  exact: boolean
  /** The part of the filter still to apply to `docs`; null when `exact`. */
  test: ((doc: Doc) => boolean) | null
}

interface Usable {
  hint: EqualityHint
  maps: ReadonlyMap<string, Doc>[]
  size: number
}

/**
 * The candidates the source's equality indexes let us visit, or undefined for a full scan.
 * Every equality hint whose path is indexed gives a candidate set (the union of its values'
 * lookups). When the smallest set is smaller than the source, the candidates are the
 * intersection of all the sets: the source's own `intersect` when it has one, otherwise the
 * smallest set walked with a hash probe into each other set. On an `exact` source the
 * top-level clauses those sets answer are not tested again: the remaining `test` is the rest
 * of the filter, and the candidates are `exact` when nothing is left.
 */
export function candidatesFor(source: QuerySource, filter: CompiledFilter): IndexCandidates | undefined {
  const usable: Usable[] = []
  for (const h of filter.hints) {
    const maps: ReadonlyMap<string, Doc>[] = []
    let size = 0
    let ok = true
    for (const v of h.values) {
      const m = source.lookup(h.path, v)
      if (!m) {
        ok = false
        break
      }
      maps.push(m)
      size += m.size
    }
    if (ok) usable.push({ hint: h, maps, size })
  }
  if (usable.length === 0) return undefined
  usable.sort((a, b) => a.size - b.size)
  const driver = usable[0]
  if (driver.size >= source.size) return undefined
  const test = source.exact === true ? filter.residual(new Set(usable.map((u) => u.hint))) : filter.test
  const others = usable.slice(1)
  let docs: Iterable<Doc> | undefined
  if (others.length === 0 && driver.maps.length === 1) docs = driver.maps[0].values()
  else if (source.intersect) docs = source.intersect(usable.map((u) => u.hint))
  if (!docs) {
    const out: Doc[] = []
    const keep = (d: Doc, id: string) => {
      for (const o of others) if (!inSome(o.maps, id)) return
      out.push(d)
    }
    if (driver.maps.length === 1) driver.maps[0].forEach(keep)
    else {
      const seen = new Map<string, Doc>()
      for (const m of driver.maps) for (const [id, d] of m) seen.set(id, d)
      seen.forEach(keep)
    }
    docs = out
  }
  return { docs, exact: test === null, test }
}

function inSome(maps: readonly ReadonlyMap<string, Doc>[], id: string): boolean {
  if (maps.length === 1) return maps[0].has(id)
  for (const m of maps) if (m.has(id)) return true
  return false
}

/**
 * The query with document-level `$text` answered by the source's text index, when the source
 * has one and the filter is not bound to it yet (compiled anew: cheap, once per query).
 */
export function withSourceText(q: CompiledQuery, source: Iterable<Doc> | QuerySource): CompiledQuery {
  if (!q.filter.hasText || q.filter.textVia === 'index' || !isQuerySource(source) || !source.textMatch || !q.filter.withText) return q
  return { ...q, filter: q.filter.withText(source.textMatch) }
}

/**
 * Documents visited between two yields of a stepped evaluation (`selectSteps`): about a
 * millisecond of filter and heap work, so a driver that yields between steps (the HTTP
 * layer's query scheduler) keeps the event loop answering during a long scan.
 */
export const STEP_DOCS = 4096

/** A stepped evaluation: yields between chunks of work, returns its result. */
export type Steps<T> = Generator<void, T, void>

/** Runs a stepped evaluation to its end without yielding. */
export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
  }
}

/**
 * A page read from a kept sort order (SortedIndex): entries in order, tested against the
 * filter, until `k` match. Unfiltered, the first `offset` entries are skipped by block and
 * only the page is touched; the total is the source's size. Filtered, the walk stops at the
 * k-th match unless the total is wanted, in which case the rest is tested and counted (no
 * sort, no heap). `top` then holds the page only: callers slice from `skipped`.
 */
function* selectSorted(index: SortedIndex, q: CompiledQuery, k: number, offset: number, needTotal: boolean, stable: boolean): Steps<Selection & { skipped: number }> {
  const top: Entry[] = []
  if (q.filter.matchesAll) {
    const want = k - offset
    if (want > 0) index.walk(offset, (e) => top.push(e) < want)
    return { top, total: index.size, indexed: true, skipped: offset }
  }
  const test = q.filter.test
  let total = 0
  let n = 0
  for (const e of stable ? index.toArray() : index.entries()) {
    if (++n % STEP_DOCS === 0) yield
    if (!test(e.doc)) continue
    total++
    if (total > offset && total <= k) top.push(e)
    else if (total >= k && !needTotal) break
  }
  return { top, total, indexed: true, skipped: offset }
}

/**
 * One pass: filter, count, keep the best k. With `offset` and a source that keeps this sort's
 * order, the page is read from that order instead (selectSorted) and `top` starts at `offset`
 * (`skipped` says how many best entries were left out); `needTotal: false` lets that walk stop
 * early, leaving `total` a lower bound.
 */
export function select(source: Iterable<Doc> | QuerySource, q: CompiledQuery, k: number, opts: SelectOptions = {}): Selection & { skipped: number } {
  return drain(selectSteps(source, q, k, opts))
}

export interface SelectOptions {
  offset?: number
  needTotal?: boolean
  /**
   * The evaluation may pause between steps while writes change the source: it first copies
   * the documents it will visit (references only, about a millisecond per 100,000), so a
   * document moved meanwhile is neither seen twice nor skipped.
   */
  stable?: boolean
}

/** `select` as a stepped evaluation: yields every STEP_DOCS documents. */
export function* selectSteps(source: Iterable<Doc> | QuerySource, q: CompiledQuery, k: number, opts: SelectOptions = {}): Steps<Selection & { skipped: number }> {
  q = withSourceText(q, source)
  const textVia = q.filter.textVia ? { textVia: q.filter.textVia } : {}
  // Equality candidates narrow the work more than any order: the kept order serves the
  // queries that would otherwise scan everything.
  const cands = q.filter.matchesAll || !isQuerySource(source) ? undefined : candidatesFor(source, q.filter)
  if (k !== Infinity && !cands && isQuerySource(source) && source.sortedBy) {
    const index = source.sortedBy(q.sort)
    if (index) return { ...(yield* selectSorted(index, q, k, opts.offset ?? 0, opts.needTotal ?? true, opts.stable === true)), ...textVia }
  }
  return { ...(yield* selectAll(source, q, k, cands, opts.stable === true)), skipped: 0, ...textVia }
}

/** One pass over every candidate: filter, count, keep the best k in a bounded heap. */
function* selectAll(source: Iterable<Doc> | QuerySource, q: CompiledQuery, k: number, cands: IndexCandidates | undefined, stable: boolean): Steps<Selection> {
  const heap = new TopK(k, q.sort.compare)
  const entry = q.sort.entry
  const after = q.sort.after
  let total = 0
  let docs: Iterable<Doc> = source
  let all = q.filter.matchesAll
  let test = q.filter.test
  if (cands) {
    docs = cands.docs
    if (cands.test) test = cands.test
    else all = true
  }
  if (stable && !Array.isArray(docs)) docs = Array.from(docs)
  // Two copies of one loop, so each iteration protocol (array index, Map iterator) and the
  // calls inside stay monomorphic. The inner loops run STEP_DOCS documents between yields.
  if (Array.isArray(docs)) {
    for (let from = 0; from < docs.length; from += STEP_DOCS) {
      if (from > 0) yield
      const to = Math.min(docs.length, from + STEP_DOCS)
      for (let i = from; i < to; i++) {
        const doc = (docs as Doc[])[i]
        if (!all && !test(doc)) continue
        total++
        const w = heap.worst
        if (w === undefined) {
          if (k > 0) heap.offer(entry(doc))
        } else if (!after(doc, w)) heap.offer(entry(doc, true))
      }
    }
  } else {
    let n = 0
    for (const doc of docs) {
      if (++n % STEP_DOCS === 0) yield
      if (!all && !test(doc)) continue
      total++
      const w = heap.worst
      if (w === undefined) {
        if (k > 0) heap.offer(entry(doc))
      } else if (!after(doc, w)) heap.offer(entry(doc, true))
    }
  }
  return { top: heap.sorted(), total, indexed: cands !== undefined }
}

/** Runs a snapshot query. Throws SvcError (`filter.*`, `request.invalid_field`) on a bad body. */
export function runQuery(docs: Iterable<Doc> | QuerySource, body: QueryOptions | CompiledQuery): QueryResult {
  return drain(runQuerySteps(docs, body))
}

/**
 * `runQuery` as a stepped evaluation, for a driver that yields to the event loop between steps
 * (server/http/query-scheduler.ts): a query over 100,000 documents then never holds the loop
 * for more than a step. The body is compiled (and rejected) before the first step. A driver
 * that lets writes run between steps passes `stable`.
 */
export function runQuerySteps(docs: Iterable<Doc> | QuerySource, body: QueryOptions | CompiledQuery, opts: { stable?: boolean } = {}): Steps<QueryResult> {
  const q = compileQuery(body)
  return pageSteps(docs, q, opts.stable === true)
}

function* pageSteps(docs: Iterable<Doc> | QuerySource, q: CompiledQuery, stable: boolean): Steps<QueryResult> {
  const k = q.limit === undefined ? Infinity : q.offset + q.limit
  const { top, total, skipped } = yield* selectSteps(docs, q, k, { offset: q.offset, needTotal: q.includeTotal, stable })
  const page = q.offset > skipped ? top.slice(q.offset - skipped) : top
  const out: QueryResult = { records: page.map((e) => q.projection.apply(e.doc)) }
  if (q.includeTotal) {
    out.total = total
    out.hasNext = q.offset + page.length < total
  }
  return out
}
