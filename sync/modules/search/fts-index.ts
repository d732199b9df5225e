import MiniSearch, { type Query, type SearchResult } from 'minisearch'
import { docKey, objectOfKey, scopeOfKey } from './doc-key.ts'
import { processTerm, tokenize } from './text.ts'

/** One indexed document: its key (doc-key.ts) and its text. */
export interface IndexedDoc {
  k: string
  t: string
}

/** An index operation as the deltas persist it: text to (re)index, or none to remove the key. */
export interface DocOp {
  k: string
  t?: string
}

/**
 * Every document of object `o` goes. Written by a drain that runs while the index is not in
 * memory (service.ts), which cannot list what the object held; a replay resolves it.
 */
export interface DropObjectOp {
  o: string
}

export type IndexOp = DocOp | DropObjectOp

export const isDropObject = (op: IndexOp): op is DropObjectOp => (op as DropObjectOp).o !== undefined

export interface FtsHit {
  key: string
  score: number
  terms: string[]
}

const OPTIONS = {
  idField: 'k',
  fields: ['t'],
  storeFields: [] as string[],
  tokenize,
  processTerm,
  // Discarded documents leave terms behind until a vacuum; minisearch's default background
  // vacuum cleans them in batches between index operations.
  autoVacuum: true,
}

/**
 * The full-text index of one space: minisearch over one text field per document, plus which
 * keys each object holds (to drop them all when the object goes). Texts are not stored: a
 * snippet reads the text again from the space (service.ts), so the index holds only terms.
 */
export class FtsIndex {
  private ms: MiniSearch<IndexedDoc>
  /** Moves on every change, so a cached answer knows it is stale. */
  version = 0
  private readonly byObject = new Map<string, Set<string>>()

  private constructor(ms: MiniSearch<IndexedDoc>, keys: Iterable<string>) {
    this.ms = ms
    for (const k of keys) this.track(k)
  }

  static empty(): FtsIndex {
    return new FtsIndex(new MiniSearch<IndexedDoc>(OPTIONS), [])
  }

  /** From a base snapshot (`serialize`), without re-tokenizing any document. */
  static load(json: string): FtsIndex {
    const { index, keys } = JSON.parse(json) as { index: unknown; keys: string[] }
    return new FtsIndex(MiniSearch.loadJS<IndexedDoc>(index as Parameters<typeof MiniSearch.loadJS>[0], OPTIONS), keys)
  }

  serialize(): string {
    const keys: string[] = []
    for (const set of this.byObject.values()) for (const k of set) keys.push(k)
    return JSON.stringify({ index: this.ms.toJSON(), keys })
  }

  get size(): number {
    return this.ms.documentCount
  }

  /** Applies one operation; returns it when it changed the index (for the delta log). */
  apply(op: IndexOp): boolean {
    if (isDropObject(op)) {
      let moved = false
      for (const k of [...this.keysOf(op.o)]) moved = this.apply({ k }) || moved
      return moved
    }
    const had = this.ms.has(op.k)
    if (op.t === undefined || op.t === '') {
      if (!had) return false
      this.ms.discard(op.k)
      this.untrack(op.k)
      this.version++
      return true
    }
    if (had) this.ms.discard(op.k)
    this.ms.add({ k: op.k, t: op.t })
    this.track(op.k)
    this.version++
    return true
  }

  keysOf(objectId: string): ReadonlySet<string> {
    return this.byObject.get(objectId) ?? EMPTY
  }

  objectIds(): IterableIterator<string> {
    return this.byObject.keys()
  }

  /**
   * Documents matching every word of `query` (the last word as a prefix too, so a typed
   * word matches before it is finished; every word with `prefixAll`, which is `$text`: no typo
   * tolerance there, a filter must be predictable; otherwise words of 5 letters or more
   * tolerate a typo when exact matching fills less than a page), all `require` words, none of the `exclude` words;
   * in `scopes` when given. Best first.
   */
  search(query: string, opts: { scopes?: ReadonlySet<string>; require?: readonly string[]; exclude?: readonly string[]; limit: number; prefixAll?: boolean }): FtsHit[] {
    const queries: Query[] = [query, ...(opts.require ?? [])]
    let q: Query = queries.length === 1 ? query : { combineWith: 'AND', queries }
    if (opts.exclude && opts.exclude.length > 0) q = { combineWith: 'AND_NOT', queries: [q, { combineWith: 'OR', queries: [...opts.exclude] }] }
    const scopes = opts.scopes
    const run = (fuzzy: boolean): SearchResult[] =>
      this.ms.search(q, {
        combineWith: 'AND',
        prefix: opts.prefixAll ? true : (_term, i, terms) => i === terms.length - 1,
        fuzzy: fuzzy ? (term) => (term.length >= 5 ? 0.2 : false) : false,
        ...(scopes ? { filter: (r: SearchResult) => scopes.has(scopeOfKey(r.id as string)) } : {}),
      })
    // Typo tolerance only when exact words and prefixes fall short of a page: expanding every
    // long word to its neighbours costs most of a search and rarely changes a full page.
    let results = run(false)
    if (!opts.prefixAll && results.length < opts.limit) results = run(true)
    const out: FtsHit[] = []
    for (const r of results) {
      if (out.length >= opts.limit) break
      out.push({ key: r.id as string, score: r.score, terms: r.terms })
    }
    return out
  }

  private track(k: string) {
    const o = objectOfKey(k)
    let set = this.byObject.get(o)
    if (!set) this.byObject.set(o, (set = new Set()))
    set.add(k)
  }

  private untrack(k: string) {
    const o = objectOfKey(k)
    const set = this.byObject.get(o)
    if (!set) return
    set.delete(k)
    if (set.size === 0) this.byObject.delete(o)
  }
}

const EMPTY: ReadonlySet<string> = new Set()
export { docKey }
