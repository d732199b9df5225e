import type { Json, JsonObject } from './ops.ts'
import { compareUtf8 } from '../core/utf8-order.ts'

/** A dotted path; '' is the whole record. */
export const splitPath = (path: string): string[] => (path === '' ? [] : path.split('.'))

/** True when `a` is `b` or an ancestor of `b` ('' is the ancestor of every path). */
export function coversPath(a: string, b: string): boolean {
  return a === '' || a === b || (b.length > a.length && b.startsWith(a) && b.charCodeAt(a.length) === 46)
}

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)

export function getPath(doc: Json | undefined, path: string): Json | undefined {
  let cur: Json | undefined = doc
  for (const seg of splitPath(path)) {
    if (!isObject(cur) || !Object.hasOwn(cur, seg)) return undefined
    cur = cur[seg]
  }
  return cur
}

/**
 * Key order of every object merge builds: UTF-8 length first, then bytewise, the order
 * deterministic CBOR (cborg) encodes maps in. So a record built in memory and one decoded from
 * storage list their keys in the same order, and every peer serializes a record to the same
 * JSON bytes whatever order its ops arrived in. (JS itself lists integer-like keys first,
 * ascending, the same way everywhere.)
 */
export function compareKeys(a: string, b: string): number {
  const la = utf8Length(a)
  const lb = utf8Length(b)
  if (la !== lb) return la - lb
  return compareUtf8(a, b)
}

function utf8Length(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

/** A deep copy of a value with every object's keys in canonical order. */
export function canonical(v: Json): Json {
  if (Array.isArray(v)) return v.map(canonical)
  if (!isObject(v)) return v
  const out: JsonObject = {}
  for (const k of Object.keys(v).sort(compareKeys)) out[k] = canonical(v[k])
  return out
}

/** `obj` with `key` set: an existing key keeps its place, a new one goes where the order puts it. */
function assign(obj: JsonObject | undefined, key: string, value: Json): JsonObject {
  if (obj && Object.hasOwn(obj, key)) {
    // Spread, then store: V8 clones the shape in one step (a computed key inside the literal
    // took three times as long, measured on merge's hot path).
    const out = { ...obj }
    out[key] = value
    return out
  }
  const out: JsonObject = {}
  let placed = false
  for (const k of obj ? Object.keys(obj) : []) {
    if (!placed && compareKeys(key, k) < 0) {
      out[key] = value
      placed = true
    }
    out[k] = obj![k]
  }
  if (!placed) out[key] = value
  return out
}

function setIn(node: Json | undefined, segs: string[], i: number, value: Json | undefined): Json | undefined {
  if (i === segs.length) return value
  const key = segs[i]
  const obj = isObject(node) ? node : undefined
  if (value === undefined) {
    // Unsetting never creates anything.
    if (!obj || !Object.hasOwn(obj, key)) return node
    if (i === segs.length - 1) {
      const { [key]: _gone, ...rest } = obj
      return rest
    }
    const child = setIn(obj[key], segs, i + 1, undefined)
    if (child === obj[key]) return node
    const out = { ...obj }
    out[key] = child as Json
    return out
  }
  return assign(obj, key, setIn(obj?.[key], segs, i + 1, value) as Json)
}

/**
 * Returns a new document with `value` at `path` (undefined removes it). Copy-on-write along
 * the path only; intermediate non-objects are replaced by objects, as every peer does. The
 * caller passes values already in canonical key order (see `canonical`).
 */
export function withPath(doc: Json | undefined, path: string, value: Json | undefined): Json | undefined {
  // A top-level field, the common case, without splitting: what setIn does for one segment.
  if (path !== '' && path.indexOf('.') === -1) {
    const obj = isObject(doc) ? doc : undefined
    if (value !== undefined) return assign(obj, path, value)
    if (!obj || !Object.hasOwn(obj, path)) return doc
    const { [path]: _gone, ...rest } = obj
    return rest
  }
  const segs = splitPath(path)
  if (segs.length === 0) return value === undefined ? {} : value
  return setIn(doc, segs, 0, value)
}

export function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true
  if (typeof a !== typeof b || a === null || b === null || a === undefined || b === undefined) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  if (a instanceof Uint8Array || b instanceof Uint8Array) return false
  if (typeof a === 'object') {
    if (Array.isArray(b)) return false
    const ka = Object.keys(a)
    const kb = Object.keys(b as JsonObject)
    if (ka.length !== kb.length) return false
    for (const k of ka) if (!Object.hasOwn(b as JsonObject, k) || !deepEqual(a[k], (b as JsonObject)[k])) return false
    return true
  }
  return false
}
