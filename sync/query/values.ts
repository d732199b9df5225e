/**
 * Value helpers shared by filter, sort, projection and the index: JSON document type, dotted
 * path resolution, `{$date}` instants, deep equality and the total order over values.
 *
 * Records are plain JSON objects. A record's id is `doc.id`; its logical position in the sync
 * DAG is `doc._ver.id` (a sortable string). Nothing here mutates a document.
 */

/** A record as the query engine sees it. Treated as immutable: results may share structure. */
export interface Doc {
  id: string
  [key: string]: unknown
}

/** Scalars an equality index can key on. */
export type Scalar = string | number | boolean

/** Most segments in a dotted path (same bound as op paths, LIMITS.maxPathDepth). */
export const MAX_PATH_SEGMENTS = 32
export const MAX_PATH_LENGTH = 1024

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

export const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

/** Splits and checks a dotted path; null when malformed (empty segment, `$` segment, too long). */
export function parsePath(path: string): string[] | null {
  if (path.length === 0 || path.length > MAX_PATH_LENGTH) return null
  const segs = path.split('.')
  if (segs.length > MAX_PATH_SEGMENTS) return null
  for (const s of segs) if (s === '' || s.charCodeAt(0) === 36 /* $ */ || s === '__proto__') return null
  return segs
}

/**
 * The single value at a path, without fanning out over arrays (a numeric segment indexes an
 * array). Used by sort and projection-free reads. undefined when missing.
 */
export function getPath(doc: unknown, segs: readonly string[]): unknown {
  let cur: unknown = doc
  for (const seg of segs) {
    if (isPlainObject(cur)) {
      if (!hasOwn(cur, seg)) return undefined
      cur = cur[seg]
    } else if (Array.isArray(cur) && isIndexSegment(seg)) {
      cur = cur[Number(seg)]
    } else return undefined
  }
  return cur
}

const isIndexSegment = (s: string): boolean => /^(0|[1-9][0-9]{0,8})$/.test(s)

/** Returned by a {@link compileReader} reader when the path crosses an array before its end. */
export const FANOUT: unique symbol = Symbol('fanout')

/**
 * A fast reader for one path: the value at the path (undefined when missing) while only
 * objects are crossed, or {@link FANOUT} when an array sits before the last segment (the
 * caller then falls back to {@link collectPath}). Hot path of filters: no allocation.
 */
export function compileReader(segs: readonly string[]): (doc: unknown) => unknown {
  const n = segs.length
  const inherited = segs.map((s) => s in Object.prototype)
  return (doc) => {
    let cur: unknown = doc
    for (let i = 0; i < n; i++) {
      if (typeof cur !== 'object' || cur === null) return undefined
      if (Array.isArray(cur)) return FANOUT
      const s = segs[i]
      if (inherited[i] && !hasOwn(cur, s)) return undefined
      cur = (cur as Record<string, unknown>)[s]
      if (cur === undefined) return undefined
    }
    return cur
  }
}

/** Like {@link compileReader} for sort: no fan-out, a numeric segment indexes an array. */
export function compileGetter(segs: readonly string[]): (doc: unknown) => unknown {
  const n = segs.length
  const inherited = segs.map((s) => s in Object.prototype)
  const index = segs.map((s) => (isIndexSegment(s) ? Number(s) : -1))
  return (doc) => {
    let cur: unknown = doc
    for (let i = 0; i < n; i++) {
      if (typeof cur !== 'object' || cur === null) return undefined
      if (Array.isArray(cur)) {
        if (index[i] < 0) return undefined
        cur = cur[index[i]]
      } else {
        const s = segs[i]
        if (inherited[i] && !hasOwn(cur, s)) return undefined
        cur = (cur as Record<string, unknown>)[s]
      }
      if (cur === undefined) return undefined
    }
    return cur
  }
}

/**
 * Every value a path reaches, Mongo style: an array met before the last segment fans out over
 * its object elements (and a numeric segment also indexes it). A missing leaf contributes
 * `undefined`; when nothing is reached at all the result is `[undefined]`.
 */
export function collectPath(doc: unknown, segs: readonly string[]): unknown[] {
  const out: unknown[] = []
  collect(doc, segs, 0, out)
  if (out.length === 0) out.push(undefined)
  return out
}

function collect(value: unknown, segs: readonly string[], i: number, out: unknown[]): void {
  if (i === segs.length) {
    out.push(value)
    return
  }
  const seg = segs[i]
  if (isPlainObject(value)) {
    if (hasOwn(value, seg)) collect(value[seg], segs, i + 1, out)
    else out.push(undefined)
    return
  }
  if (Array.isArray(value)) {
    if (isIndexSegment(seg)) {
      const n = Number(seg)
      if (n < value.length) collect(value[n], segs, i + 1, out)
    }
    for (const el of value) if (isPlainObject(el)) collect(el, segs, i, out)
    return
  }
  out.push(undefined)
}

// ---------------------------------------------------------------------------------------------
// Instants

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?([Zz]|[+-]\d{2}:?\d{2})?$/

/**
 * Milliseconds since the epoch (sub-millisecond digits kept as a fraction) for an ISO 8601
 * timestamp; NaN when it is not one. A timestamp without an offset is read as UTC.
 * Own parser so every browser agrees (Date.parse accepts engine-specific formats).
 */
export function parseInstant(s: string): number {
  const m = ISO_RE.exec(s)
  if (!m) return NaN
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac, tz] = m
  const Y = Number(y), M = Number(mo), D = Number(d), H = Number(h), Mi = Number(mi), S = Number(sec)
  if (M < 1 || M > 12 || D < 1 || D > daysIn(Y, M) || H > 23 || Mi > 59 || S > 59) return NaN
  let ms = Date.UTC(Y, M - 1, D, H, Mi, S)
  if (Y < 100) ms = new Date(ms).setUTCFullYear(Y)
  if (frac) ms += Number('0.' + frac) * 1000
  if (tz && tz !== 'Z' && tz !== 'z') {
    const sign = tz[0] === '-' ? -1 : 1
    const digits = tz.slice(1).replace(':', '')
    const oh = Number(digits.slice(0, 2)), om = Number(digits.slice(2))
    if (oh > 23 || om > 59) return NaN
    ms -= sign * (oh * 60 + om) * 60_000
  }
  return ms
}

function daysIn(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31
}

/** `{$date: <string>}` and nothing else. */
export const isDateWrapper = (v: unknown): v is { $date: string } => {
  if (!isPlainObject(v) || typeof v.$date !== 'string') return false
  for (const k in v) if (k !== '$date') return false
  return true
}

const instantCache = new WeakMap<object, number>()

/** Instant of a stored `{$date}` wrapper, or NaN when `v` is not a well-formed one. */
export function instantOf(v: unknown): number {
  if (!isDateWrapper(v)) return NaN
  const hit = instantCache.get(v)
  if (hit !== undefined) return hit
  const ms = parseInstant(v.$date)
  instantCache.set(v, ms)
  return ms
}

// ---------------------------------------------------------------------------------------------
// Type ranks, equality and the total order

/**
 * Rank of a value in the total order used by sort (and by range operators, which only compare
 * within one rank): missing/null < booleans < numbers < strings < `{$date}` instants < others
 * (arrays, objects, malformed `{$date}` wrappers).
 */
export const Rank = { Null: 0, Bool: 1, Num: 2, Str: 3, Date: 4, Other: 5 } as const
export type Rank = (typeof Rank)[keyof typeof Rank]

export function rankOf(v: unknown): Rank {
  if (v === undefined || v === null) return Rank.Null
  switch (typeof v) {
    case 'boolean':
      return Rank.Bool
    case 'number':
      return Rank.Num
    case 'string':
      return Rank.Str
  }
  return Number.isNaN(instantOf(v)) ? Rank.Other : Rank.Date
}

/**
 * Deep equality over JSON values. Two `{$date}` wrappers are equal when they name the same
 * instant; object key order is irrelevant. Missing (undefined) equals only missing.
 */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false
  const ia = instantOf(a)
  if (!Number.isNaN(ia)) return ia === instantOf(b)
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  for (const k of ka) if (!hasOwn(b, k) || !valuesEqual(a[k], b[k])) return false
  return true
}

/** Comparison within the code-unit order of strings: deterministic, locale-free. */
export const cmpPrim = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * A value reduced to what the total order needs: its rank and a primitive to compare within
 * the rank (booleans as 0/1, instants as ms, others as canonical JSON).
 */
export interface OrderKey {
  r: Rank
  v: number | string
}

export function orderKey(v: unknown): OrderKey {
  const r = rankOf(v)
  switch (r) {
    case Rank.Null:
      return NULL_KEY
    case Rank.Bool:
      return { r, v: v ? 1 : 0 }
    case Rank.Num:
    case Rank.Str:
      return { r, v: v as number | string }
    case Rank.Date:
      return { r, v: instantOf(v) }
    default:
      return { r, v: canonicalJson(v) }
  }
}

const NULL_KEY: OrderKey = { r: Rank.Null, v: 0 }

export const compareKeys = (a: OrderKey, b: OrderKey): number => (a.r !== b.r ? a.r - b.r : cmpPrim(a.v, b.v))

/** Writes the rank and in-rank value of `v` at `out[pos]`, `out[pos + 1]` (no allocation). */
export function writeKey(v: unknown, out: Array<number | string>, pos: number): void {
  switch (typeof v) {
    case 'string':
      out[pos] = Rank.Str
      out[pos + 1] = v
      return
    case 'number':
      out[pos] = Rank.Num
      out[pos + 1] = v
      return
    case 'boolean':
      out[pos] = Rank.Bool
      out[pos + 1] = v ? 1 : 0
      return
  }
  if (v === undefined || v === null) {
    out[pos] = Rank.Null
    out[pos + 1] = 0
    return
  }
  const ms = instantOf(v)
  if (Number.isNaN(ms)) {
    out[pos] = Rank.Other
    out[pos + 1] = canonicalJson(v)
  } else {
    out[pos] = Rank.Date
    out[pos + 1] = ms
  }
}

/** Total order over values (see {@link rankOf}). */
export const compareValues = (a: unknown, b: unknown): number => compareKeys(orderKey(a), orderKey(b))

/** JSON with object keys sorted, so equal values have one text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map(canonicalJson).join(',') + ']'
  if (isPlainObject(v)) {
    const keys = Object.keys(v).sort()
    return '{' + keys.map((k) => JSON.stringify(k) + ':' + canonicalJson(v[k])).join(',') + '}'
  }
  return v === undefined ? 'null' : JSON.stringify(v) ?? 'null'
}
