import { SvcError } from '../core/errors.ts'
import { cmpInRank, compileGetter, type Doc, parsePath, writeKey } from './values.ts'

/**
 * Sort specs: `string[]` of dotted paths, `-` prefix for descending (`['-core.name', 'n']`).
 *
 * Total order across types (ascending): missing/null < booleans (false < true) < numbers <
 * strings (UTF-16 code unit order, locale-free, identical on every device) < `{$date}` instants
 * (by instant) < others (arrays, objects, malformed `{$date}`: by canonical JSON text). A path
 * is read without fanning out over arrays (a numeric segment indexes an array); an array value
 * ranks as "other". Descending reverses the whole order, so missing values come last.
 *
 * Ties (and the default order when no sort is given) are broken by `_ver.id` then `id`, both
 * ascending whatever the direction of the spec, so results are deterministic.
 */

export const MAX_SORT_KEYS = 8

export interface SortField {
  path: string
  segs: string[]
  desc: boolean
}

/**
 * A document with its precomputed sort key: `k[2i]` is the rank and `k[2i + 1]` the in-rank
 * value of field i; the last pair is `_ver.id`.
 */
export interface Entry {
  id: string
  doc: Doc
  k: Array<number | string>
}

export interface CompiledSort {
  readonly fields: readonly SortField[]
  /** The spec in one string (`-core.name,n`): two sorts with one key order documents alike. */
  readonly key: string
  /**
   * The entry of a document. `afterWasLast`: the previous call on this sort was `after(doc, _)`
   * for the same doc, so its first key is reused instead of read again.
   */
  readonly entry: (doc: Doc, afterWasLast?: boolean) => Entry
  readonly compare: (a: Entry, b: Entry) => number
  /** True when `doc` certainly sorts after `e` (decided on the first key alone, no allocation). */
  readonly after: (doc: Doc, e: Entry) => boolean
  /** Compares two documents (computes their keys; use entries on hot paths). */
  readonly compareDocs: (a: Doc, b: Doc) => number
}

const VER = ['_ver', 'id']

const bad = (message: string) => new SvcError('request.invalid_field', message, { field: 'sort' })

export function compileSort(spec: unknown): CompiledSort {
  if (spec === undefined || spec === null) spec = []
  if (!Array.isArray(spec)) throw bad('sort must be an array of field names')
  if (spec.length > MAX_SORT_KEYS) throw bad(`sort takes at most ${MAX_SORT_KEYS} fields`)
  const fields: SortField[] = spec.map((s) => {
    if (typeof s !== 'string') throw bad('sort must be an array of field names')
    const desc = s.startsWith('-')
    const path = desc ? s.slice(1) : s
    const segs = parsePath(path)
    if (!segs) throw bad('malformed sort field')
    return { path, segs, desc }
  })
  // `_ver.id` ascending closes every spec; `id` breaks what remains.
  const all = [...fields, { path: '_ver.id', segs: VER, desc: false }]
  const n = all.length
  const getters = all.map((f) => compileGetter(f.segs))
  const sign = all.map((f) => (f.desc ? -1 : 1))
  const scratch: Array<number | string> = [0, 0]
  const entry = (doc: Doc, afterWasLast = false): Entry => {
    const k = new Array<number | string>(2 * n)
    let i = 0
    if (afterWasLast) {
      k[0] = scratch[0]
      k[1] = scratch[1]
      i = 1
    }
    for (; i < n; i++) writeKey(getters[i](doc), k, 2 * i)
    return { id: String(doc.id), doc, k }
  }
  const compare = (a: Entry, b: Entry): number => {
    const ka = a.k
    const kb = b.k
    for (let i = 0; i < n; i++) {
      const ra = ka[2 * i] as number
      const rb = kb[2 * i] as number
      const c = ra !== rb ? ra - rb : cmpInRank(ra, ka[2 * i + 1], kb[2 * i + 1])
      if (c !== 0) return c * sign[i]
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  }
  const first = getters[0]
  const desc0 = all[0].desc
  const after = (doc: Doc, e: Entry): boolean => {
    const v = first(doc)
    const rb = e.k[0]
    // Fast paths for the common same-type cases: one specialized comparison, no calls.
    if (typeof v === 'string' && rb === 3) {
      scratch[0] = 3
      scratch[1] = v
      const w = e.k[1] as string
      return desc0 ? v < w : v > w
    }
    if (typeof v === 'number' && rb === 2) {
      scratch[0] = 2
      scratch[1] = v
      const w = e.k[1] as number
      return desc0 ? v < w : v > w
    }
    writeKey(v, scratch, 0)
    const ra = scratch[0] as number
    const c = ra !== rb ? ra - (rb as number) : cmpInRank(ra, scratch[1], e.k[1])
    return c * sign[0] > 0
  }
  const key = fields.map((f) => (f.desc ? '-' : '') + f.path).join(',')
  return { fields, key, entry, compare, after, compareDocs: (a, b) => compare(entry(a), entry(b)) }
}

/**
 * The `k` smallest entries under `cmp`, sorted, by a bounded max-heap: O(n log k) time and
 * O(k) memory instead of sorting all n. `k` Infinity keeps (and sorts) everything.
 */
export class TopK {
  private readonly heap: Entry[] = []
  constructor(
    private readonly k: number,
    private readonly cmp: (a: Entry, b: Entry) => number,
  ) {}

  /** The current worst kept entry once k are held (anything not better is rejected). */
  get worst(): Entry | undefined {
    return this.heap.length >= this.k ? this.heap[0] : undefined
  }

  /** Offers an entry; returns false when it was rejected outright. */
  offer(e: Entry): boolean {
    const h = this.heap
    if (this.k === 0) return false
    if (this.k === Infinity) {
      h.push(e)
      return true
    }
    if (h.length < this.k) {
      h.push(e)
      this.up(h.length - 1)
      return true
    }
    if (this.cmp(e, h[0]) >= 0) return false
    h[0] = e
    this.down(0)
    return true
  }

  /** Kept entries, best first. Consumes the heap. */
  sorted(): Entry[] {
    return this.heap.sort(this.cmp)
  }

  private up(i: number): void {
    const h = this.heap
    while (i > 0) {
      const p = (i - 1) >> 1
      if (this.cmp(h[i], h[p]) <= 0) break
      ;[h[i], h[p]] = [h[p], h[i]]
      i = p
    }
  }

  private down(i: number): void {
    const h = this.heap
    const n = h.length
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < n && this.cmp(h[l], h[m]) > 0) m = l
      if (r < n && this.cmp(h[r], h[m]) > 0) m = r
      if (m === i) return
      ;[h[i], h[m]] = [h[m], h[i]]
      i = m
    }
  }
}
