import { SvcError } from '../core/errors.ts'
import {
  collectPath,
  compileReader,
  FANOUT,
  type Doc,
  hasOwn,
  instantOf,
  isDateWrapper,
  isPlainObject,
  orderKey,
  parseInstant,
  parsePath,
  Rank,
  rankOf,
  type Scalar,
  valuesEqual,
} from './values.ts'

/**
 * Mongo-style filters, compiled once into a predicate.
 *
 * Field clauses: `{path: literal}` (implicit `$eq`) or `{path: {$op: arg, ...}}` on dotted
 * paths. An array met on the way fans out over its object elements; an array at the end
 * matches when ANY element matches (`$eq` against a whole array also works, deep equality).
 * Operators: `$eq $ne $gt $gte $lt $lte $in $nin $exists $not $all $size $elemMatch $text`;
 * top level (and inside logical arrays): `$and $or $nor $text`.
 *
 * Values: no coercion; a comparison across types never matches (number vs string). Range
 * operators compare within one type only (boolean, number, string, instant). Instants are
 * `{$date: ISO}` wrappers and compare as instants (ms, with sub-ms digits); a bare string never
 * matches a stored `{$date}` and raises no error. `$ne`/`$nin`/`$exists: false`/`$not`/`$nor`
 * are the negations of their positive twins, so they also match a missing field.
 *
 * `$text` (case- and diacritic-insensitive SUBSTRING match, not a tokenized full-text search;
 * the search index serves that): the search string is split into terms on whitespace, a
 * `"quoted phrase"` being one term; a document matches when EVERY term occurs in at least one
 * string leaf. `{path: {$text: 'words'}}` (or `{$search: 'words'}`) searches the string leaves
 * at and under `path`; top level `{$text: {$search: 'words'}}` searches every string leaf of
 * the record except `id`, top-level keys starting with `_` (`_ver`, `_traces`, ...) and the
 * text of `{$date}` wrappers. Object keys are never searched. No terms: matches everything.
 *
 * Errors: unknown `$op` is 400 `filter.unknown_operator` (`details.operator`, `details.path`:
 * the field path, '' at top level); anything structurally wrong is 400 `filter.invalid`
 * (`details.path` when there is one; `details.limit` for the depth and size guards).
 */

export type FilterDoc = Record<string, unknown>

/**
 * A constraint every matching document satisfies: some value at `path` (or an element of an
 * array there) is one of `values`. An equality index can answer it; see QuerySource.
 */
export interface EqualityHint {
  path: string
  values: Scalar[]
}

export interface CompiledFilter {
  readonly test: (doc: Doc) => boolean
  /** Conjunctive equality constraints extracted from the filter (for index lookups). */
  readonly hints: readonly EqualityHint[]
  /** True for the empty filter. */
  readonly matchesAll: boolean
  /** True when a document-level `$text` is in the filter (a source's text index may answer it). */
  readonly hasText?: boolean
  /** The same filter with document-level `$text` answered by `text` (explain: `textVia`). */
  readonly withText?: (text: TextMatchProvider) => CompiledFilter
  /** How document-level `$text` is answered: `index` (a search index) or `scan` (substring). */
  readonly textVia?: 'index' | 'scan'
  /** Set when the whole filter is this one equality constraint (an exact index answers it). */
  readonly exactHint?: EqualityHint
  /**
   * The filter minus its top-level clauses that are exactly one of `covered` (a scalar `v`,
   * `{$eq: v}` or `{$in: [...]}` clause whose hint an exact index already guaranteed), or null
   * when nothing is left to test.
   */
  readonly residual: (covered: ReadonlySet<EqualityHint>) => ((doc: Doc) => boolean) | null
}

export const FILTER_LIMITS = {
  /** Deepest nesting of filter objects, operator objects, arrays and literal values. */
  maxDepth: 32,
  /** Most nodes (clauses, operator arguments, `$in` elements, literal sub-values) in one filter. */
  maxNodes: 20_000,
  /** Most terms in one `$text` search. */
  maxTextTerms: 32,
} as const

type Values = unknown[]
/**
 * A field matcher: `one` for the common case of a path that reached a single value, `many`
 * for the values of a path that fanned out over arrays. Positive matchers are "any" over the
 * values; negations negate the whole set, so `many` is not always `some(one)`.
 */
interface Matcher {
  one: (v: unknown) => boolean
  many: (vs: Values) => boolean
}
type Pred = (doc: unknown) => boolean

const FIELD_OPS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$not', '$all', '$size', '$elemMatch', '$text'])

const invalid = (message: string, details?: Record<string, unknown>) => new SvcError('filter.invalid', message, details)
const unknownOp = (operator: string, path: string) => new SvcError('filter.unknown_operator', `unknown filter operator ${operator}`, { operator, path })

interface Ctx {
  nodes: number
  /** Answers document-level `$text` from a search index instead of the substring scan. */
  text?: TextMatchProvider
  /** Set when the filter holds a document-level `$text`. */
  hasText?: boolean
  textVia?: 'index' | 'scan'
}

/**
 * A full-text index a source offers for document-level `$text` (QuerySource.textMatch): the
 * search string in, a membership test out (undefined: the index cannot answer now, so the
 * substring scan runs). Field-level `{path: {$text}}` always scans.
 */
export type TextMatchProvider = (search: string) => ((doc: Doc) => boolean) | undefined

function tick(ctx: Ctx, depth: number): void {
  if (depth > FILTER_LIMITS.maxDepth) throw invalid('filter nested too deeply', { limit: 'depth', max: FILTER_LIMITS.maxDepth })
  if (++ctx.nodes > FILTER_LIMITS.maxNodes) throw invalid('filter too large', { limit: 'size', max: FILTER_LIMITS.maxNodes })
}

/** Compiles a filter document. Throws SvcError `filter.invalid` / `filter.unknown_operator`. */
export function compileFilter(filter: unknown, opts: { text?: TextMatchProvider } = {}): CompiledFilter {
  if (filter === undefined || filter === null) return MATCH_ALL
  if (!isPlainObject(filter)) throw invalid('filter must be an object')
  const ctx: Ctx = { nodes: 0, text: opts.text }
  const hints: EqualityHint[] = []
  const parts: Clause[] = []
  const pred = compileDoc(filter, ctx, 1, hints, parts)
  const keys = Object.keys(filter)
  if (keys.length === 0) return MATCH_ALL
  const test = pred as (doc: Doc) => boolean
  const out: CompiledFilter & { exactHint?: EqualityHint } = {
    test,
    hints,
    matchesAll: false,
    residual: (covered) => {
      const rest: Pred[] = []
      for (const p of parts) if (!(p.hint && covered.has(p.hint))) rest.push(p.pred)
      if (rest.length === parts.length) return test
      if (rest.length === 0) return null
      return rest.length === 1 ? rest[0] : all(rest)
    },
  }
  if (keys.length === 1 && hints.length === 1 && isSingleEquality(filter[keys[0]])) out.exactHint = hints[0]
  if (ctx.hasText) Object.assign(out, { hasText: true, textVia: ctx.textVia ?? 'scan', withText: (text: TextMatchProvider) => compileFilter(filter, { text }) })
  return out
}

/** A top-level clause; `hint` when the clause is exactly that equality constraint. */
interface Clause {
  pred: Pred
  hint?: EqualityHint
}

const all =
  (preds: Pred[]): Pred =>
  (d) => {
    for (const p of preds) if (!p(d)) return false
    return true
  }

const MATCH_ALL: CompiledFilter = { test: () => true, hints: [], matchesAll: true, residual: () => null }

/** A field clause that is one scalar equality: `v`, `{$eq: v}` or `{$in: [v...]}`. */
function isSingleEquality(arg: unknown): boolean {
  if (isScalar(arg)) return true
  if (!isPlainObject(arg)) return false
  const ks = Object.keys(arg)
  if (ks.length !== 1) return false
  if (ks[0] === '$eq') return isScalar(arg.$eq)
  return ks[0] === '$in' && Array.isArray(arg.$in) && arg.$in.every(isScalar)
}

/** A filter document (top level, `$and`/`$or`/`$nor` element, `$elemMatch` sub-document). */
function compileDoc(f: Record<string, unknown>, ctx: Ctx, depth: number, hints: EqualityHint[] | null, clauses?: Clause[]): Pred {
  tick(ctx, depth)
  const preds: Pred[] = []
  for (const key of Object.keys(f)) {
    const arg = f[key]
    const before = preds.length
    const hintsBefore = hints?.length ?? 0
    if (key.startsWith('$')) {
      switch (key) {
        case '$and':
        case '$or':
        case '$nor': {
          if (!Array.isArray(arg) || arg.length === 0) throw invalid(`${key} takes a non-empty array of filters`, { path: key })
          tick(ctx, depth + 1)
          const subs = arg.map((s) => {
            if (!isPlainObject(s)) throw invalid(`${key} elements must be filter objects`, { path: key })
            return compileDoc(s, ctx, depth + 2, key === '$and' ? hints : null)
          })
          if (key === '$and') preds.push((d) => subs.every((p) => p(d)))
          else if (key === '$or') preds.push((d) => subs.some((p) => p(d)))
          else preds.push((d) => !subs.some((p) => p(d)))
          break
        }
        case '$text': {
          const terms = textTerms(arg, '', ctx, depth + 1)
          if (terms.length === 0) break
          ctx.hasText = true
          const viaIndex = ctx.text?.(terms.join(' '))
          // One `$text` the index cannot answer makes the whole filter's explain say `scan`.
          ctx.textVia = viaIndex && ctx.textVia !== 'scan' ? 'index' : 'scan'
          preds.push((viaIndex as Pred | undefined) ?? ((d) => textMatch(docHaystack(d), terms)))
          break
        }
        default:
          throw unknownOp(key, '')
      }
      if (clauses && preds.length > before) clauses.push({ pred: preds[before] })
      continue
    }
    const segs = parsePath(key)
    if (!segs) throw invalid(`malformed field path`, { path: key })
    const m = compileField(arg, key, ctx, depth + 1, hints)
    const read = compileReader(segs)
    const { one, many } = m
    const pred: Pred = (d) => {
      const v = read(d)
      return v === FANOUT ? many(collectPath(d, segs)) : one(v)
    }
    preds.push(pred)
    if (clauses) {
      const own = hints && hints.length === hintsBefore + 1 && isSingleEquality(arg) ? hints[hintsBefore] : undefined
      clauses.push(own ? { pred, hint: own } : { pred })
    }
  }
  if (preds.length === 0) return () => true
  if (preds.length === 1) return preds[0]
  return all(preds)
}

const isOperatorObject = (v: unknown): v is Record<string, unknown> => {
  if (!isPlainObject(v) || isDateWrapper(v)) return false
  for (const k in v) if (k.startsWith('$')) return true
  return false
}

/** The value of a field clause: a literal (implicit `$eq`) or an operator object. */
function compileField(arg: unknown, path: string, ctx: Ctx, depth: number, hints: EqualityHint[] | null): Matcher {
  if (!isOperatorObject(arg)) {
    checkLiteral(arg, path, ctx, depth)
    if (hints && isScalar(arg)) hints.push({ path, values: [arg] })
    return eqMatcher(arg)
  }
  return compileOps(arg, path, ctx, depth, hints)
}

function compileOps(ops: Record<string, unknown>, path: string, ctx: Ctx, depth: number, hints: EqualityHint[] | null): Matcher {
  tick(ctx, depth)
  const ms: Matcher[] = []
  for (const op of Object.keys(ops)) {
    if (!op.startsWith('$')) throw invalid('an operator object cannot mix operators and fields', { path })
    if (op === '$date') throw invalid('$date is a value wrapper and takes no other keys', { path })
    if (!FIELD_OPS.has(op)) throw unknownOp(op, path)
    ms.push(compileOp(op, ops[op], path, ctx, depth + 1, hints))
  }
  if (ms.length === 1) return ms[0]
  return {
    one: (v) => ms.every((m) => m.one(v)),
    many: (vs) => ms.every((m) => m.many(vs)),
  }
}

function compileOp(op: string, arg: unknown, path: string, ctx: Ctx, depth: number, hints: EqualityHint[] | null): Matcher {
  switch (op) {
    case '$eq':
      checkLiteral(arg, path, ctx, depth)
      if (hints && isScalar(arg)) hints.push({ path, values: [arg] })
      return eqMatcher(arg)
    case '$ne':
      checkLiteral(arg, path, ctx, depth)
      return negate(eqMatcher(arg))
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      checkLiteral(arg, path, ctx, depth)
      return rangeMatcher(op, arg, path)
    case '$in':
    case '$nin': {
      const list = literalList(op, arg, path, ctx, depth)
      if (op === '$in' && hints && list.every(isScalar)) hints.push({ path, values: list })
      const m = inMatcher(list)
      return op === '$in' ? m : negate(m)
    }
    case '$all': {
      const list = literalList(op, arg, path, ctx, depth)
      if (list.length === 0) return NEVER
      if (hints) for (const v of list) if (isScalar(v)) hints.push({ path, values: [v] })
      const ms = list.map(eqMatcher)
      return { one: (v) => ms.every((m) => m.one(v)), many: (vs) => ms.every((m) => m.many(vs)) }
    }
    case '$exists': {
      if (typeof arg !== 'boolean') throw invalid('$exists takes a boolean', { path })
      const m = someValue((v) => v !== undefined)
      return arg ? m : negate(m)
    }
    case '$size': {
      if (typeof arg !== 'number' || !Number.isSafeInteger(arg) || arg < 0) throw invalid('$size takes a non-negative integer', { path })
      return someValue((v) => Array.isArray(v) && v.length === arg)
    }
    case '$not': {
      if (!isOperatorObject(arg)) throw invalid('$not takes an operator object', { path })
      return negate(compileOps(arg, path, ctx, depth, null))
    }
    case '$elemMatch': {
      if (!isPlainObject(arg) || isDateWrapper(arg)) throw invalid('$elemMatch takes an object', { path })
      if (isOperatorObject(arg)) {
        const m = compileOps(arg, path, ctx, depth, null)
        return someValue((v) => Array.isArray(v) && v.some((el) => m.one(el)))
      }
      const p = compileDoc(arg, ctx, depth, null)
      return someValue((v) => Array.isArray(v) && v.some((el) => isPlainObject(el) && p(el)))
    }
    case '$text': {
      const terms = textTerms(arg, path, ctx, depth)
      if (terms.length === 0) return ALWAYS
      const many = (vs: Values): boolean => {
        const parts: string[] = []
        for (const v of vs) stringLeaves(v, parts, false)
        return textMatch(parts.join('\u0000'), terms)
      }
      return { one: (v) => many([v]), many }
    }
  }
  throw unknownOp(op, path)
}

// ---------------------------------------------------------------------------------------------
// Literals

const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))

/** A JSON value usable as a comparand: no operator objects, well-formed `{$date}` wrappers. */
function checkLiteral(v: unknown, path: string, ctx: Ctx, depth: number): void {
  tick(ctx, depth)
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw invalid('numbers must be finite', { path })
    return
  }
  if (Array.isArray(v)) {
    for (const x of v) checkLiteral(x, path, ctx, depth + 1)
    return
  }
  if (isPlainObject(v)) {
    if (hasOwn(v, '$date')) {
      if (!isDateWrapper(v) || Number.isNaN(parseInstant(v.$date))) throw invalid('$date takes an ISO 8601 timestamp', { path })
      return
    }
    for (const k of Object.keys(v)) {
      if (k.startsWith('$')) throw invalid('operators are not allowed inside a value', { path })
      checkLiteral(v[k], path, ctx, depth + 1)
    }
    return
  }
  throw invalid('filter values must be JSON', { path })
}

function literalList(op: string, arg: unknown, path: string, ctx: Ctx, depth: number): unknown[] {
  if (!Array.isArray(arg)) throw invalid(`${op} takes an array`, { path })
  for (const v of arg) checkLiteral(v, path, ctx, depth + 1)
  return arg
}

// ---------------------------------------------------------------------------------------------
// Matchers over the values a path reached. Every one is "any": a value matches, or, when the
// value is an array, any of its elements does.

const ALWAYS: Matcher = { one: () => true, many: () => true }
const NEVER: Matcher = { one: () => false, many: () => false }

const negate = (m: Matcher): Matcher => ({ one: (v) => !m.one(v), many: (vs) => !m.many(vs) })

/** Matches when some value satisfies `one` (no look into array elements). */
function someValue(one: (v: unknown) => boolean): Matcher {
  return {
    one,
    many: (vs) => {
      for (const v of vs) if (one(v)) return true
      return false
    },
  }
}

/** Matches when some value, or some element of an array value, satisfies `p`. */
function anyLeaf(p: (v: unknown) => boolean): Matcher {
  return someValue((v) => {
    if (p(v)) return true
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) if (p(v[i])) return true
    return false
  })
}

function eqPred(arg: unknown): (v: unknown) => boolean {
  if (arg === null) return (v) => v === null || v === undefined
  if (typeof arg !== 'object') return (v) => v === arg
  if (isDateWrapper(arg)) {
    const ms = parseInstant(arg.$date)
    return (v) => typeof v === 'object' && instantOf(v) === ms
  }
  return (v) => valuesEqual(v, arg)
}

function eqMatcher(arg: unknown): Matcher {
  return anyLeaf(eqPred(arg))
}

function inMatcher(list: unknown[]): Matcher {
  const prims = new Set<unknown>()
  const rest: Array<(v: unknown) => boolean> = []
  for (const v of list) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') prims.add(v)
    else rest.push(eqPred(v))
  }
  const p = (v: unknown): boolean => {
    if (prims.has(v)) return true
    for (const r of rest) if (r(v)) return true
    return false
  }
  return anyLeaf(p)
}

function rangeMatcher(op: string, arg: unknown, path: string): Matcher {
  const r = rankOf(arg)
  if (r !== Rank.Num && r !== Rank.Str && r !== Rank.Bool && r !== Rank.Date) {
    throw invalid(`${op} takes a number, string, boolean or {$date}`, { path })
  }
  const k = orderKey(arg).v
  const test: (c: number) => boolean = op === '$gt' ? (c) => c > 0 : op === '$gte' ? (c) => c >= 0 : op === '$lt' ? (c) => c < 0 : (c) => c <= 0
  let p: (v: unknown) => boolean
  if (r === Rank.Num) p = (v) => typeof v === 'number' && test(v < (k as number) ? -1 : v > (k as number) ? 1 : 0)
  else if (r === Rank.Str) p = (v) => typeof v === 'string' && test(v < (k as string) ? -1 : v > (k as string) ? 1 : 0)
  else if (r === Rank.Bool) p = (v) => typeof v === 'boolean' && test((v ? 1 : 0) - (k as number))
  else
    p = (v) => {
      if (typeof v !== 'object' || v === null) return false
      const ms = instantOf(v)
      return !Number.isNaN(ms) && test(ms < (k as number) ? -1 : ms > (k as number) ? 1 : 0)
    }
  return anyLeaf(p)
}

// ---------------------------------------------------------------------------------------------
// $text

// eslint-disable-next-line no-control-regex -- the ASCII range, control characters included
const ASCII = /^[\x00-\x7f]*$/
const MARKS = /\p{M}+/gu

/** Case and diacritic folding shared by the haystack and the terms. */
export function foldText(s: string): string {
  return ASCII.test(s) ? s.toLowerCase() : s.normalize('NFD').replace(MARKS, '').toLowerCase()
}

function textTerms(arg: unknown, path: string, ctx: Ctx, depth: number): string[] {
  tick(ctx, depth)
  let search: unknown = arg
  if (isPlainObject(arg)) {
    for (const k of Object.keys(arg)) if (k !== '$search') throw invalid('$text takes {$search: string}', { path })
    search = arg.$search
  }
  if (typeof search !== 'string') throw invalid('$text takes a search string', { path })
  const terms: string[] = []
  const re = /"([^"]*)"|(\S+)/g
  for (const m of search.matchAll(re)) {
    const t = foldText((m[1] ?? m[2]).trim().replace(/\s+/g, ' '))
    if (t.length > 0) terms.push(t)
  }
  if (terms.length > FILTER_LIMITS.maxTextTerms) throw invalid('too many $text terms', { path, limit: 'text', max: FILTER_LIMITS.maxTextTerms })
  return terms
}

function stringLeaves(v: unknown, out: string[], topLevel: boolean): void {
  if (typeof v === 'string') out.push(foldText(v))
  else if (Array.isArray(v)) for (const x of v) stringLeaves(x, out, false)
  else if (isPlainObject(v)) {
    if (isDateWrapper(v)) return
    for (const k of Object.keys(v)) {
      if (topLevel && (k === 'id' || k.startsWith('_'))) continue
      stringLeaves(v[k], out, false)
    }
  }
}

function docHaystack(d: unknown): string {
  const parts: string[] = []
  stringLeaves(d, parts, true)
  return parts.join('\u0000')
}

const textMatch = (hay: string, terms: string[]): boolean => terms.every((t) => hay.includes(t))
