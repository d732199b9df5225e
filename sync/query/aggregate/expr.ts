import { hasOwn, instantOf, isDateWrapper, isPlainObject, parsePath } from '../values.ts'
import { badPipeline, MAX_EXPRESSION_DEPTH } from './errors.ts'
import { siteGetter } from './sites.ts'

/**
 * The expression language of pipelines, deliberately minimal:
 *
 * - `'$a.b'`: a field path of the current document, read like sort paths (no fan-out over
 *   arrays; a numeric segment indexes an array; anything else through an array is missing);
 * - `'$$ROOT'`: the current document itself (`'$$ROOT.a.b'` is `'$a.b'`);
 * - `{$literal: v}`: `v` as is (to write a string starting with `$`, or an object with `$` keys);
 * - `{k: expr, ...}` / `[expr, ...]`: an object / array whose members are expressions (a missing
 *   member becomes null); keys must be plain field names (no `.`, no leading `$`);
 * - any other JSON value (number, boolean, null, a string not starting with `$`, `{$date}`) is
 *   a literal.
 *
 * Anything else with a `$` key (`{$add: ...}`, `'$$NOW'`, ...) is `aggregate.bad_pipeline`.
 * A missing value evaluates to `undefined`; stages document how they treat it.
 */

export type Expr = (doc: unknown) => unknown

export interface CompiledExpr {
  readonly fn: Expr
  readonly kind: 'path' | 'root' | 'literal' | 'object' | 'array'
  /** `path`: the dotted path; `literal`: the value. */
  readonly path?: string
  readonly value?: unknown
  /** Canonical text of the expression: equal texts evaluate equally (used to share work). */
  readonly text: string
}

/** Where an expression sits, for error details. */
export interface ExprSite {
  stage: number
  op: string
  field: string
}

const ROOT: Expr = (d) => d

/**
 * Compiles an expression. `getterSite`: a top-level field path reads through that getter site
 * (see sites.ts; hot loops give each role its own), -1 for the shared one.
 */
export function compileExpr(spec: unknown, site: ExprSite, depth = 1, getterSite = -1): CompiledExpr {
  if (depth > MAX_EXPRESSION_DEPTH) {
    throw badPipeline('expression nested too deeply', site.stage, { op: site.op, field: site.field, max: MAX_EXPRESSION_DEPTH })
  }
  if (typeof spec === 'string' && spec.charCodeAt(0) === 36 /* $ */) {
    if (spec === '$$ROOT') return { fn: ROOT, kind: 'root', text: '$$ROOT' }
    if (spec.startsWith('$$ROOT.')) return compileExpr('$' + spec.slice(7), site, depth, getterSite)
    if (spec.startsWith('$$')) {
      throw badPipeline(`unknown variable ${spec}`, site.stage, { op: site.op, field: site.field, operator: spec })
    }
    const path = spec.slice(1)
    const segs = parsePath(path)
    if (!segs) throw badPipeline(`malformed field path ${spec}`, site.stage, { op: site.op, field: site.field })
    return { fn: siteGetter(getterSite, segs), kind: 'path', path, text: spec }
  }
  if (Array.isArray(spec)) {
    const items = spec.map((s) => compileExpr(s, site, depth + 1))
    if (items.every((i) => i.kind === 'literal')) return literal(items.map((i) => (i.value === undefined ? null : i.value)))
    const fns = items.map((i) => i.fn)
    const n = fns.length
    return {
      fn: (d) => {
        const out = new Array<unknown>(n)
        for (let i = 0; i < n; i++) out[i] = fns[i](d) ?? null
        return out
      },
      kind: 'array',
      text: '[' + items.map((i) => i.text).join(',') + ']',
    }
  }
  if (isPlainObject(spec) && !isDateWrapper(spec)) {
    const keys = Object.keys(spec)
    if (keys.length === 1 && keys[0] === '$literal') return literal(spec.$literal)
    const fields: string[] = []
    const items: CompiledExpr[] = []
    for (const k of keys) {
      if (k.charCodeAt(0) === 36) {
        throw badPipeline(`unknown expression operator ${k}`, site.stage, { op: site.op, field: site.field, operator: k })
      }
      checkFieldName(k, site)
      fields.push(k)
      items.push(compileExpr(spec[k], site, depth + 1))
    }
    if (items.every((i) => i.kind === 'literal')) {
      const value: Record<string, unknown> = {}
      for (let i = 0; i < fields.length; i++) value[fields[i]] = items[i].value ?? null
      return literal(value)
    }
    const fns = items.map((i) => i.fn)
    const n = fns.length
    return {
      fn: (d) => {
        const out: Record<string, unknown> = {}
        for (let i = 0; i < n; i++) out[fields[i]] = fns[i](d) ?? null
        return out
      },
      kind: 'object',
      text: '{' + fields.map((f, i) => JSON.stringify(f) + ':' + items[i].text).join(',') + '}',
    }
  }
  return literal(spec)
}

function literal(value: unknown): CompiledExpr {
  return { fn: () => value, kind: 'literal', value, text: 'L' + ckey(value) }
}

/** An output field name: non-empty, no `.`, no leading `$`, not `__proto__`. */
export function checkFieldName(name: string, site: ExprSite): void {
  if (name.length === 0 || name.includes('.') || name.charCodeAt(0) === 36 || name === '__proto__') {
    throw badPipeline(`invalid field name ${JSON.stringify(name)}`, site.stage, { op: site.op, field: name })
  }
}

// ---------------------------------------------------------------------------------------------
// Grouping keys and size estimates

/**
 * Canonical key of a value for grouping and `$addToSet`: equal under `valuesEqual` (deep,
 * object key order free, `{$date}` by instant) iff equal keys. Missing and null share a key.
 * Strings are JSON-quoted, so keys of composite values are unambiguous.
 */
export function ckey(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v)
    case 'number':
      return 'n' + String(v)
    case 'boolean':
      return v ? 'T' : 'F'
    case 'undefined':
      return 'z'
  }
  if (v === null) return 'z'
  if (Array.isArray(v)) {
    let s = '['
    for (let i = 0; i < v.length; i++) s += (i > 0 ? ',' : '') + ckey(v[i])
    return s + ']'
  }
  const ms = instantOf(v)
  if (!Number.isNaN(ms)) return 'd' + String(ms)
  if (!isPlainObject(v)) return 'z'
  const keys = Object.keys(v).sort()
  let s = '{'
  for (let i = 0; i < keys.length; i++) s += (i > 0 ? ',' : '') + JSON.stringify(keys[i]) + ':' + ckey(v[keys[i]])
  return s + '}'
}

/**
 * Estimated bytes held by a JSON value (documented in README "Aggregate"): 8 per number,
 * boolean, null; 16 + 2 per UTF-16 unit per string; arrays 16 + 8 per slot + elements; objects
 * 32 + per key (24 + 2 per key unit) + values.
 */
export function sizeOf(v: unknown): number {
  switch (typeof v) {
    case 'string':
      return 16 + 2 * v.length
    case 'object': {
      if (v === null) return 8
      if (Array.isArray(v)) {
        let n = 16 + 8 * v.length
        for (let i = 0; i < v.length; i++) n += sizeOf(v[i])
        return n
      }
      let n = 32
      const o = v as Record<string, unknown>
      for (const k in o) n += 24 + 2 * k.length + sizeOf(o[k])
      return n
    }
    default:
      return 8
  }
}

// ---------------------------------------------------------------------------------------------
// Copy-on-write path updates (documents are shared with the input and never mutated)

/** A copy of `doc` with `value` at `segs` (objects along the path copied, created when absent). */
export function setPath(doc: Record<string, unknown>, segs: readonly string[], value: unknown): Record<string, unknown> {
  const out = { ...doc }
  let cur = out
  for (let i = 0; i < segs.length - 1; i++) {
    const s = segs[i]
    const x = hasOwn(cur, s) ? cur[s] : undefined
    const next = isPlainObject(x) ? { ...x } : {}
    cur[s] = next
    cur = next
  }
  cur[segs[segs.length - 1]] = value
  return out
}

/** A copy of `doc` without the leaf at `segs` (objects along the path copied); `doc` when absent. */
export function unsetPath(doc: Record<string, unknown>, segs: readonly string[]): Record<string, unknown> {
  const chain: Record<string, unknown>[] = [doc]
  for (let i = 0; i < segs.length - 1; i++) {
    const x = hasOwn(chain[i], segs[i]) ? chain[i][segs[i]] : undefined
    if (!isPlainObject(x)) return doc
    chain.push(x)
  }
  const last = segs[segs.length - 1]
  if (!hasOwn(chain[chain.length - 1], last)) return doc
  let child: Record<string, unknown> = { ...chain[chain.length - 1] }
  delete child[last]
  for (let i = chain.length - 2; i >= 0; i--) child = { ...chain[i], [segs[i]]: child }
  return child
}

/** The value at `segs` crossing objects only (an array on the way makes it missing). */
export function readObjectPath(doc: unknown, segs: readonly string[]): unknown {
  let cur = doc
  for (const s of segs) {
    if (!isPlainObject(cur) || !hasOwn(cur, s)) return undefined
    cur = cur[s]
  }
  return cur
}
