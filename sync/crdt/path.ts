import type { Json, JsonObject } from './ops.ts'

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
 * Returns a new document with `value` at `path` (undefined removes it). Copy-on-write along
 * the path only; intermediate non-objects are replaced by objects, as every peer does.
 */
export function withPath(doc: Json | undefined, path: string, value: Json | undefined): Json | undefined {
  const segs = splitPath(path)
  if (segs.length === 0) return value === undefined ? {} : value
  if (value === undefined && !isObject(doc)) return doc
  const root: JsonObject = isObject(doc) ? { ...doc } : {}
  let cur = root
  for (let i = 0; i < segs.length - 1; i++) {
    const next = cur[segs[i]]
    const copy: JsonObject = isObject(next) ? { ...next } : {}
    if (value === undefined && !isObject(next)) return doc
    cur[segs[i]] = copy
    cur = copy
  }
  const last = segs[segs.length - 1]
  if (value === undefined) delete cur[last]
  else cur[last] = value
  return root
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
    for (const k of ka) if (!Object.hasOwn(b as JsonObject, k) || !deepEqual((a as JsonObject)[k], (b as JsonObject)[k])) return false
    return true
  }
  return false
}
