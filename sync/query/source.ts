import type { CompiledSort } from './sort.ts'
import { SortedIndex } from './sorted-index.ts'
import { collectPath, type Doc, parsePath, type Scalar } from './values.ts'
import type { TextMatchProvider } from './filter.ts'

/**
 * Where a query reads documents from. A plain `Iterable<Doc>` is always full-scanned; a
 * QuerySource can also answer equality lookups on indexed paths so runQuery and LiveWindow
 * visit only candidates instead of scanning (a storage-backed source can implement `lookup`
 * with its own secondary index).
 *
 * Index semantics (what `lookup` returns, by id): the documents where some value reached by
 * the path (fanning out over arrays on the way, as filters do), or an element of an array
 * found there, is `value` under strict equality (string, finite number, boolean). A source
 * whose `lookup` may return more than that must leave `exact` unset: the filter is then
 * re-applied to every candidate. With `exact: true` a filter that is only that equality skips
 * the re-check.
 */
export interface QuerySource extends Iterable<Doc> {
  /** Candidates for `path == value` (id -> document), or undefined when `path` is not indexed. */
  lookup(path: string, value: Scalar): ReadonlyMap<string, Doc> | undefined
  /** Number of documents (used to decide whether an index beats a scan). */
  readonly size: number
  /** True when `lookup` answers exactly the semantics above (no false positives). */
  readonly exact?: boolean
  /**
   * Optional: the documents in the sets of every constraint (a constraint's set is the union
   * of its values' lookups), or undefined when a path is not indexed. Lets a source intersect
   * faster than id probes.
   */
  intersect?(constraints: ReadonlyArray<{ path: string; values: readonly Scalar[] }>): Doc[] | undefined
  /**
   * Optional: every document kept in this sort's order (sync/query/sorted-index.ts), or
   * undefined when the source keeps none for it (yet). Lets a page be read from the front
   * instead of selecting it from every document.
   */
  sortedBy?(sort: CompiledSort): SortedIndex | undefined
  /** Optional: a full-text index answering document-level `$text` (the space's search module sets it). */
  textMatch?: TextMatchProvider
}

export const isQuerySource = (x: unknown): x is QuerySource => typeof x === 'object' && x !== null && typeof (x as QuerySource).lookup === 'function'

const EMPTY: ReadonlyMap<string, Doc> = new Map()

/** Index key of a scalar: type-tagged so 1 and '1' differ. */
export function scalarKey(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return 's' + v
    case 'number':
      return Number.isFinite(v) ? 'n' + String(v) : undefined
    case 'boolean':
      return v ? 'bt' : 'bf'
  }
  return undefined
}

/**
 * Equality indexes built on demand: a path that equality filters keep asking for gets an index
 * like the declared ones, kept current from then on.
 */
export interface AutoIndexOptions {
  /** Collections with fewer documents are scanned and never indexed on demand. */
  minDocs: number
  /** Lookups of an unindexed path (about one per query filtering on it) that build its index. */
  afterLookups: number
  /** Most paths indexed on demand; further paths are scanned. */
  maxPaths: number
}

/**
 * Sort orders kept on demand (SortedIndex): a sort that queries keep asking for is kept current
 * from then on, so its pages cost O(offset + limit).
 */
export interface AutoSortOptions {
  /** Collections with fewer documents are sorted per query, never kept sorted. */
  minDocs: number
  /** Queries with one sort (about one per request) that build its order. */
  afterQueries: number
  /** Most sort orders kept at once; further sorts select per query. Each costs an entry per document. */
  maxSorts: number
}

/** The documents having one value at one path: by id, and their slots in ascending order. */
interface Posting {
  docs: Map<string, Doc>
  slots: SlotList
}

interface PathIndex {
  segs: string[]
  byValue: Map<string, Posting>
}

/** Unindexed paths whose lookups are counted at once (the counts reset past this). */
const MAX_COUNTED_PATHS = 1024

/**
 * An in-memory collection with exact equality indexes on chosen paths: for each path a Map
 * from value to the ids (with their documents) having it. Maintained by `upsert(doc)` /
 * `remove(id)`. Documents are kept by reference and must not be mutated in place (upsert a
 * new object instead). With `autoIndex`, a lookup of another path counts, and the
 * `afterLookups`-th one builds its index (one pass over the documents) if fewer than `maxPaths`
 * were built that way and the collection holds at least `minDocs` documents.
 *
 * Every document also has a small integer slot, and each (path, value) keeps its documents'
 * slots sorted, so `intersect` merges integer arrays instead of probing hash maps (a probe
 * costs a cache miss or two per candidate on a large collection).
 *
 * Memory: one Map entry per distinct (path, value), one Map slot and 4 to 8 bytes per
 * (doc, value) pair, one slot per document.
 */
export class InMemoryIndex implements QuerySource {
  textMatch?: TextMatchProvider
  readonly exact = true
  private readonly docs = new Map<string, Doc>()
  private readonly slotOf = new Map<string, number>()
  private readonly slotDocs: Array<Doc | undefined> = []
  private readonly freeSlots: number[] = []
  private readonly indexes = new Map<string, PathIndex>()
  private readonly auto: AutoIndexOptions | undefined
  private readonly built: string[] = []
  private readonly misses = new Map<string, number>()
  private readonly autoSort: AutoSortOptions | undefined
  private readonly sorted = new Map<string, SortedIndex>()
  private readonly sortMisses = new Map<string, number>()

  constructor(paths: Iterable<string>, docs: Iterable<Doc> = [], options: { autoIndex?: AutoIndexOptions; autoSort?: AutoSortOptions } = {}) {
    for (const p of paths) {
      const segs = parsePath(p)
      if (!segs) throw new TypeError(`malformed index path ${p}`)
      this.indexes.set(p, { segs, byValue: new Map() })
    }
    this.auto = options.autoIndex
    this.autoSort = options.autoSort
    for (const d of docs) this.upsert(d)
  }

  get size(): number {
    return this.docs.size
  }

  /** Every indexed path, declared and built on demand. */
  get paths(): string[] {
    return [...this.indexes.keys()]
  }

  /** The paths indexed on demand, oldest first. */
  get autoPaths(): string[] {
    return [...this.built]
  }

  [Symbol.iterator](): Iterator<Doc> {
    return this.docs.values()
  }

  get(id: string): Doc | undefined {
    return this.docs.get(id)
  }

  has(id: string): boolean {
    return this.docs.has(id)
  }

  upsert(doc: Doc): void {
    const id = doc.id
    if (typeof id !== 'string') throw new TypeError('document without a string id')
    const old = this.docs.get(id)
    if (old === doc) return
    let slot = this.slotOf.get(id)
    if (slot === undefined) {
      slot = this.freeSlots.pop() ?? this.slotDocs.length
      this.slotOf.set(id, slot)
    }
    this.slotDocs[slot] = doc
    this.docs.set(id, doc)
    for (const ix of this.indexes.values()) reindex(ix, id, slot, old, doc)
    for (const ix of this.sorted.values()) ix.upsert(doc)
  }

  remove(id: string): boolean {
    const old = this.docs.get(id)
    if (!old) return false
    const slot = this.slotOf.get(id) as number
    for (const ix of this.indexes.values()) reindex(ix, id, slot, old, undefined)
    for (const ix of this.sorted.values()) ix.remove(id)
    this.docs.delete(id)
    this.slotOf.delete(id)
    this.slotDocs[slot] = undefined
    this.freeSlots.push(slot)
    return true
  }

  lookup(path: string, value: Scalar): ReadonlyMap<string, Doc> | undefined {
    const ix = this.indexes.get(path) ?? this.onDemand(path)
    if (!ix) return undefined
    const k = scalarKey(value)
    return (k !== undefined && ix.byValue.get(k)?.docs) || EMPTY
  }

  /**
   * The documents in every constraint's set (a constraint's set being the union of its values'
   * lookups), in slot order; undefined when a path is not indexed.
   */
  intersect(constraints: ReadonlyArray<{ path: string; values: readonly Scalar[] }>): Doc[] | undefined {
    const lists: Int32Array[] = []
    for (const c of constraints) {
      const ix = this.indexes.get(c.path)
      if (!ix) return undefined
      const parts: Int32Array[] = []
      for (const v of c.values) {
        const k = scalarKey(v)
        const p = k === undefined ? undefined : ix.byValue.get(k)
        if (p) parts.push(p.slots.view())
      }
      lists.push(parts.length === 1 ? parts[0] : unionSorted(parts))
    }
    if (lists.length === 0) return undefined
    lists.sort((a, b) => a.length - b.length)
    let cur = lists[0]
    for (let i = 1; i < lists.length && cur.length > 0; i++) cur = intersectSorted(cur, lists[i])
    const out = new Array<Doc>(cur.length)
    for (let i = 0; i < cur.length; i++) out[i] = this.slotDocs[cur[i]] as Doc
    return out
  }

  /** The kept order of this sort; the `afterQueries`-th query with it builds it (see AutoSortOptions). */
  sortedBy(sort: CompiledSort): SortedIndex | undefined {
    const kept = this.sorted.get(sort.key)
    if (kept) return kept
    const auto = this.autoSort
    if (!auto || this.sorted.size >= auto.maxSorts || this.docs.size < auto.minDocs) return undefined
    const seen = (this.sortMisses.get(sort.key) ?? 0) + 1
    if (seen < auto.afterQueries) {
      if (this.sortMisses.size >= MAX_COUNTED_PATHS) this.sortMisses.clear()
      this.sortMisses.set(sort.key, seen)
      return undefined
    }
    this.sortMisses.delete(sort.key)
    const ix = new SortedIndex(sort, this.docs.values())
    this.sorted.set(sort.key, ix)
    return ix
  }

  /** The sort orders kept, by sort key. */
  get sortKeys(): string[] {
    return [...this.sorted.keys()]
  }

  private onDemand(path: string): PathIndex | undefined {
    const auto = this.auto
    if (!auto || this.built.length >= auto.maxPaths || this.docs.size < auto.minDocs) return undefined
    const seen = (this.misses.get(path) ?? 0) + 1
    if (seen < auto.afterLookups) {
      if (this.misses.size >= MAX_COUNTED_PATHS) this.misses.clear()
      this.misses.set(path, seen)
      return undefined
    }
    this.misses.delete(path)
    const segs = parsePath(path)
    if (!segs) return undefined
    const ix: PathIndex = { segs, byValue: new Map() }
    // Ascending slots, so every posting is built by appends.
    for (let slot = 0; slot < this.slotDocs.length; slot++) {
      const doc = this.slotDocs[slot]
      if (doc) reindex(ix, doc.id, slot, undefined, doc)
    }
    this.indexes.set(path, ix)
    this.built.push(path)
    return ix
  }
}

/** Moves a document between postings of one path: `old` (or none) out, `doc` (or none) in. */
function reindex(ix: PathIndex, id: string, slot: number, old: Doc | undefined, doc: Doc | undefined): void {
  const before = old ? keysAt(old, ix.segs) : NO_KEYS
  const after = doc ? keysAt(doc, ix.segs) : NO_KEYS
  for (const k of before) {
    if (after.has(k)) continue
    const p = ix.byValue.get(k)
    if (!p) continue
    p.docs.delete(id)
    p.slots.delete(slot)
    if (p.docs.size === 0) ix.byValue.delete(k)
  }
  for (const k of after) {
    let p = ix.byValue.get(k)
    if (!p) ix.byValue.set(k, (p = { docs: new Map(), slots: new SlotList() }))
    if (!before.has(k)) p.slots.add(slot)
    p.docs.set(id, doc as Doc)
  }
}

const NO_KEYS: ReadonlySet<string> = new Set()

/** A sorted set of non-negative integers in a growable Int32Array. */
class SlotList {
  private a = new Int32Array(4)
  private n = 0

  view(): Int32Array {
    return this.a.subarray(0, this.n)
  }

  add(x: number): void {
    const i = this.n === 0 || this.a[this.n - 1] < x ? this.n : lowerBound(this.a, this.n, x)
    if (i < this.n && this.a[i] === x) return
    if (this.n === this.a.length) {
      const b = new Int32Array(this.a.length * 2)
      b.set(this.a)
      this.a = b
    }
    if (i < this.n) this.a.copyWithin(i + 1, i, this.n)
    this.a[i] = x
    this.n++
  }

  delete(x: number): void {
    const i = lowerBound(this.a, this.n, x)
    if (i >= this.n || this.a[i] !== x) return
    this.a.copyWithin(i, i + 1, this.n)
    this.n--
  }
}

function lowerBound(a: Int32Array, n: number, x: number): number {
  let lo = 0
  let hi = n
  while (lo < hi) {
    const m = (lo + hi) >>> 1
    if (a[m] < x) lo = m + 1
    else hi = m
  }
  return lo
}

/** Sorted intersection; `a` is the shorter list. Binary searches when `b` is much longer. */
export function intersectSorted(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(Math.min(a.length, b.length))
  let n = 0
  if (b.length > 16 * a.length) {
    let from = 0
    for (let i = 0; i < a.length; i++) {
      let lo = from
      let hi = b.length
      const x = a[i]
      while (lo < hi) {
        const m = (lo + hi) >>> 1
        if (b[m] < x) lo = m + 1
        else hi = m
      }
      if (lo < b.length && b[lo] === x) out[n++] = x
      from = lo
    }
    return out.subarray(0, n)
  }
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const x = a[i]
    const y = b[j]
    if (x === y) {
      out[n++] = x
      i++
      j++
    } else if (x < y) i++
    else j++
  }
  return out.subarray(0, n)
}

/** Sorted union of sorted lists (duplicates once). */
export function unionSorted(lists: readonly Int32Array[]): Int32Array {
  if (lists.length === 0) return new Int32Array(0)
  let total = 0
  for (const l of lists) total += l.length
  const all = new Int32Array(total)
  let at = 0
  for (const l of lists) {
    all.set(l, at)
    at += l.length
  }
  all.sort()
  let n = 0
  for (let i = 0; i < all.length; i++) if (n === 0 || all[n - 1] !== all[i]) all[n++] = all[i]
  return all.subarray(0, n)
}

/** Distinct index keys of the scalars a path reaches (elements of arrays included). */
function keysAt(doc: Doc, segs: string[]): Set<string> {
  const out = new Set<string>()
  for (const v of collectPath(doc, segs)) {
    const k = scalarKey(v)
    if (k !== undefined) out.add(k)
    else if (Array.isArray(v))
      for (const el of v) {
        const ke = scalarKey(el)
        if (ke !== undefined) out.add(ke)
      }
  }
  return out
}
