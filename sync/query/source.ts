import { collectPath, type Doc, parsePath, type Scalar } from './values.ts'

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
}

export const isQuerySource = (x: unknown): x is QuerySource =>
  typeof x === 'object' && x !== null && typeof (x as QuerySource).lookup === 'function'

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
 * An in-memory collection with exact equality indexes on chosen paths: for each path a Map
 * from value to the ids (with their documents) having it. Maintained by `upsert(doc)` /
 * `remove(id)`. Documents are kept by reference and must not be mutated in place (upsert a
 * new object instead).
 *
 * Memory: one Map entry per distinct (path, value) and one Map slot per (doc, value) pair.
 */
export class InMemoryIndex implements QuerySource {
  readonly exact = true
  private readonly docs = new Map<string, Doc>()
  private readonly indexes = new Map<string, { segs: string[]; byValue: Map<string, Map<string, Doc>> }>()

  constructor(paths: Iterable<string>, docs: Iterable<Doc> = []) {
    for (const p of paths) {
      const segs = parsePath(p)
      if (!segs) throw new TypeError(`malformed index path ${p}`)
      this.indexes.set(p, { segs, byValue: new Map() })
    }
    for (const d of docs) this.upsert(d)
  }

  get size(): number {
    return this.docs.size
  }

  get paths(): string[] {
    return [...this.indexes.keys()]
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
    if (old) this.unindex(old)
    this.docs.set(id, doc)
    for (const ix of this.indexes.values()) {
      for (const k of keysAt(doc, ix.segs)) {
        let set = ix.byValue.get(k)
        if (!set) ix.byValue.set(k, (set = new Map()))
        set.set(id, doc)
      }
    }
  }

  remove(id: string): boolean {
    const old = this.docs.get(id)
    if (!old) return false
    this.unindex(old)
    this.docs.delete(id)
    return true
  }

  lookup(path: string, value: Scalar): ReadonlyMap<string, Doc> | undefined {
    const ix = this.indexes.get(path)
    if (!ix) return undefined
    const k = scalarKey(value)
    return (k !== undefined && ix.byValue.get(k)) || EMPTY
  }

  private unindex(doc: Doc): void {
    for (const ix of this.indexes.values()) {
      for (const k of keysAt(doc, ix.segs)) {
        const set = ix.byValue.get(k)
        if (!set) continue
        set.delete(doc.id)
        if (set.size === 0) ix.byValue.delete(k)
      }
    }
  }
}

/** Distinct index keys of the scalars a path reaches (elements of arrays included). */
function keysAt(doc: Doc, segs: string[]): Set<string> {
  const out = new Set<string>()
  for (const v of collectPath(doc, segs)) {
    const k = scalarKey(v)
    if (k !== undefined) out.add(k)
    else if (Array.isArray(v)) for (const el of v) {
      const ke = scalarKey(el)
      if (ke !== undefined) out.add(ke)
    }
  }
  return out
}
