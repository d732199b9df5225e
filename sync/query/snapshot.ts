import { SvcError } from '../core/errors.ts'
import { MAX_QUERY_LIMIT } from '../core/limits.ts'
import { type CompiledFilter, compileFilter, type EqualityHint } from './filter.ts'
import { compileProjection, type Projection } from './projection.ts'
import { type CompiledSort, compileSort, type Entry, TopK } from './sort.ts'
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
 * O(n log(offset + limit)) time and O(offset + limit) memory; no full sort.
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

/** One pass: filter, count, keep the best k. */
export function select(source: Iterable<Doc> | QuerySource, q: CompiledQuery, k: number): Selection {
  const heap = new TopK(k, q.sort.compare)
  const entry = q.sort.entry
  const after = q.sort.after
  let total = 0
  let docs: Iterable<Doc> = source
  const filter = withSourceText(q, source).filter
  let all = filter.matchesAll
  let test = filter.test
  const cands = all || !isQuerySource(source) ? undefined : candidatesFor(source, filter)
  if (cands) {
    docs = cands.docs
    if (cands.test) test = cands.test
    else all = true
  }
  // Two copies of one loop, so each iteration protocol (array index, Map iterator) and the
  // calls inside stay monomorphic.
  if (Array.isArray(docs)) {
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i]
      if (!all && !test(doc)) continue
      total++
      const w = heap.worst
      if (w === undefined) {
        if (k > 0) heap.offer(entry(doc))
      } else if (!after(doc, w)) heap.offer(entry(doc, true))
    }
  } else {
    for (const doc of docs) {
      if (!all && !test(doc)) continue
      total++
      const w = heap.worst
      if (w === undefined) {
        if (k > 0) heap.offer(entry(doc))
      } else if (!after(doc, w)) heap.offer(entry(doc, true))
    }
  }
  return { top: heap.sorted(), total, indexed: cands !== undefined, ...(filter.textVia ? { textVia: filter.textVia } : {}) }
}

/** Runs a snapshot query. Throws SvcError (`filter.*`, `request.invalid_field`) on a bad body. */
export function runQuery(docs: Iterable<Doc> | QuerySource, body: QueryOptions | CompiledQuery): QueryResult {
  const q = compileQuery(body)
  const k = q.limit === undefined ? Infinity : q.offset + q.limit
  const { top, total } = select(docs, q, k)
  const page = q.offset > 0 ? top.slice(q.offset) : top
  const out: QueryResult = { records: page.map((e) => q.projection.apply(e.doc)) }
  if (q.includeTotal) {
    out.total = total
    out.hasNext = q.offset + page.length < total
  }
  return out
}
