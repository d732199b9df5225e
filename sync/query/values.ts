/**
 * Value helpers shared by filter, sort, projection and the index: JSON document type, dotted
 * path resolution, `{$date}` instants, deep equality and the total order over values.
 *
 * Records are plain JSON objects. A record's id is `doc.id`; its logical position in the sync
 * DAG is `doc._ver.id` (a sortable string). Nothing here mutates a document.
 */
import { MAX_PATH_LENGTH } from '../core/limits.ts'

/** A record as the query engine sees it. Treated as immutable: results may share structure. */
export interface Doc {
  id: string
  [key: string]: unknown
}

/** Scalars an equality index can key on. */
export type Scalar = string | number | boolean

/** Most segments in a dotted path (same bound as op paths, LIMITS.maxPathDepth). */
export const MAX_PATH_SEGMENTS = 32
export { MAX_PATH_LENGTH }

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

/** Splits and checks a dotted path; null when malformed (empty segment, `$` segment, too long). */
export function parsePath(path: string): string[] | null {
  if (path.length === 0 || path.length > MAX_PATH_LENGTH) return null
  const segs = path.split('.')
  if (segs.length > MAX_PATH_SEGMENTS) return null
  for (const s of segs) if (s === '' || s.charCodeAt(0) === 36 /* $ */ || s === '__proto__') return null
  return segs
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
  if (segs.some((s) => s in Object.prototype)) return readerLoop(segs)
  // Unrolled short paths: each property access site then sees one key and (usually) one object
  // shape, which keeps the engine's inline caches monomorphic on the hot path.
  if (segs.length === 1) {
    const [a] = segs
    return (d) => (d as Record<string, unknown>)[a]
  }
  if (segs.length === 2) {
    const [a, b] = segs
    return (d) => {
      const x = (d as Record<string, unknown>)[a]
      if (typeof x !== 'object' || x === null) return undefined
      return Array.isArray(x) ? FANOUT : (x as Record<string, unknown>)[b]
    }
  }
  if (segs.length === 3) {
    const [a, b, c] = segs
    return (d) => {
      const x = (d as Record<string, unknown>)[a]
      if (typeof x !== 'object' || x === null) return undefined
      if (Array.isArray(x)) return FANOUT
      const y = (x as Record<string, unknown>)[b]
      if (typeof y !== 'object' || y === null) return undefined
      return Array.isArray(y) ? FANOUT : (y as Record<string, unknown>)[c]
    }
  }
  return readerLoop(segs)
}

function readerLoop(segs: readonly string[]): (doc: unknown) => unknown {
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
  const plain = !segs.some((s) => s in Object.prototype || isIndexSegment(s))
  if (plain && segs.length === 1) {
    const [a] = segs
    return (d) => (d as Record<string, unknown>)[a]
  }
  if (plain && segs.length === 2) {
    const [a, b] = segs
    return (d) => {
      const x = (d as Record<string, unknown>)[a]
      return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as Record<string, unknown>)[b]
    }
  }
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
  const Y = Number(y),
    M = Number(mo),
    D = Number(d),
    H = Number(h),
    Mi = Number(mi),
    S = Number(sec)
  if (M < 1 || M > 12 || D < 1 || D > daysIn(Y, M) || H > 23 || Mi > 59 || S > 59) return NaN
  let ms = Date.UTC(Y, M - 1, D, H, Mi, S)
  if (Y < 100) ms = new Date(ms).setUTCFullYear(Y)
  if (frac) ms += Number('0.' + frac) * 1000
  if (tz && tz !== 'Z' && tz !== 'z') {
    const sign = tz[0] === '-' ? -1 : 1
    const digits = tz.slice(1).replace(':', '')
    const oh = Number(digits.slice(0, 2)),
      om = Number(digits.slice(2))
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

/** Instant of a stored `{$date}` wrapper, or NaN when `v` is not a well-formed one. */
export function instantOf(v: unknown): number {
  if (!isDateWrapper(v)) return NaN
  return fastInstant(v.$date)
}

/**
 * The common canonical form `YYYY-MM-DDTHH:MM:SS[.fff]Z` read digit by digit (no regex, no
 * Date); anything else goes through {@link parseInstant}. Sort and range filters call this
 * once per record, so it is kept allocation-free.
 */
function fastInstant(s: string): number {
  const n = s.length
  if ((n === 20 || n === 24) && s.charCodeAt(n - 1) === 90 /* Z */ && s.charCodeAt(10) === 84 /* T */) {
    let ok = s.charCodeAt(4) === 45 && s.charCodeAt(7) === 45 && s.charCodeAt(13) === 58 && s.charCodeAt(16) === 58
    const Y = num(s, 0, 4)
    const M = num(s, 5, 2)
    const D = num(s, 8, 2)
    const h = num(s, 11, 2)
    const mi = num(s, 14, 2)
    const sec = num(s, 17, 2)
    let ms = 0
    if (n === 24) {
      ok = ok && s.charCodeAt(19) === 46
      ms = num(s, 20, 3)
    }
    if (ok && Y >= 100 && M >= 1 && M <= 12 && D >= 1 && D <= daysIn(Y, M) && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && sec >= 0 && sec <= 59 && ms >= 0) {
      return daysFromCivil(Y, M, D) * 86_400_000 + h * 3_600_000 + mi * 60_000 + sec * 1000 + ms
    }
  }
  return parseInstant(s)
}

/** The decimal number in s[at, at + len), or -1 when a character is not a digit. */
function num(s: string, at: number, len: number): number {
  let v = 0
  for (let i = at; i < at + len; i++) {
    const c = s.charCodeAt(i) - 48
    if (c < 0 || c > 9) return -1
    v = v * 10 + c
  }
  return v
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
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
 * Compares two in-rank values of rank `r` (see {@link writeKey}). Strings and numbers take
 * separate comparison sites, so each stays specialized (a mixed site is several times slower).
 */
export function cmpInRank(r: number, a: string | number, b: string | number): number {
  if (r === Rank.Str || r === Rank.Other) {
    const x = a as string
    const y = b as string
    return x < y ? -1 : x === y ? 0 : 1
  }
  const x = a as number
  const y = b as number
  return x < y ? -1 : x > y ? 1 : 0
}

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
  // An if-chain on typeof with literal ranks (see Rank): measurably faster than a switch here.
  if (typeof v === 'string') {
    out[pos] = 3
    out[pos + 1] = v
  } else if (typeof v === 'number') {
    out[pos] = 2
    out[pos + 1] = v
  } else if (typeof v === 'boolean') {
    out[pos] = 1
    out[pos + 1] = v ? 1 : 0
  } else if (v === undefined || v === null) {
    out[pos] = 0
    out[pos + 1] = 0
  } else {
    const ms = instantOf(v)
    if (Number.isNaN(ms)) {
      out[pos] = 5
      out[pos + 1] = canonicalJson(v)
    } else {
      out[pos] = 4
      out[pos + 1] = ms
    }
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
  return v === undefined ? 'null' : (JSON.stringify(v) ?? 'null')
}
