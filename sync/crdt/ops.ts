import { LIMITS } from '../core/limits.ts'
import { YTEXT_LIMITS } from './ytext-limits.ts'

export type Json = null | boolean | number | string | Json[] | JsonObject
export interface JsonObject {
  [key: string]: Json
}

/**
 * What merge sees. `$inc`, `$addToSet` and `$pull` never reach here: the writer resolves them
 * into the `set` of the result against its own state (see resolve.ts).
 * `ds` is the dataset ('' is the object's own row); `id` the record id.
 */
export type Op =
  | { op: 'set'; ds: string; id: string; path: string; value: Json }
  | { op: 'unset'; ds: string; id: string; path: string }
  /** A Yjs update (base64) to the text at `path`, written under the client id of (author, salt): sync/crdt/ytext.ts. */
  | { op: 'ytext'; ds: string; id: string; path: string; update: string; salt: string }
  | { op: 'delete'; ds: string; id: string }
  | { op: 'deleteObject' }

/**
 * A record id that stands for "derived from this change": merge replaces it with
 * base58(xxh3-64(changeId)), the spec's property id rule, so a definition can be created and
 * named by one change although its id depends on that change's own id.
 */
export const CHANGE_DERIVED_ID = '@change'

/** The decrypted payload of an object-tree change. */
export interface ChangePayload {
  ops: Op[]
  traceIds?: string[]
}

export class InvalidOp extends Error {
  constructor(readonly reason: string) {
    super(`invalid op: ${reason}`)
  }
}

const isName = (s: unknown): s is string => typeof s === 'string' && s.length <= 256

/** A storable op path: '' (whole value) or dot-separated non-empty segments, no `__proto__`. */
export function checkPath(path: unknown): asserts path is string {
  if (typeof path !== 'string' || path.length > 1024) throw new InvalidOp('path')
  if (path === '') return
  if (path.indexOf('.') === -1) {
    if (path === '__proto__') throw new InvalidOp('path')
    return
  }
  const segs = path.split('.')
  if (segs.length > LIMITS.maxPathDepth || segs.some((s) => s === '' || s === '__proto__')) throw new InvalidOp('path')
}

/** A value merge can store: JSON with finite numbers, bounded depth, no prototype keys. */
export function checkValue(v: unknown, depth = 0): asserts v is Json {
  if (depth > LIMITS.maxValueDepth) throw new InvalidOp('value too deep')
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new InvalidOp('non-finite number')
    return
  }
  if (Array.isArray(v)) {
    for (const x of v) checkValue(x, depth + 1)
    return
  }
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    for (const [k, x] of Object.entries(v)) {
      if (k === '__proto__') throw new InvalidOp('reserved key')
      checkValue(x, depth + 1)
    }
    return
  }
  throw new InvalidOp('value type')
}

/** Shape check for ops decoded from a peer's change; anything else makes the change malformed. */
export function checkPayload(p: unknown): asserts p is ChangePayload {
  if (typeof p !== 'object' || p === null || !Array.isArray((p as ChangePayload).ops)) throw new InvalidOp('payload shape')
  const { ops, traceIds } = p as ChangePayload
  if (ops.length > LIMITS.maxOpsPerChange) throw new InvalidOp('too many ops')
  if (traceIds !== undefined && (!Array.isArray(traceIds) || !traceIds.every(isName))) throw new InvalidOp('traceIds')
  for (const op of ops) {
    if (typeof op !== 'object' || op === null) throw new InvalidOp('op shape')
    if (op.op === 'deleteObject') continue
    if (!isName(op.ds) || !isName(op.id)) throw new InvalidOp('ds or id')
    if (op.op === 'delete') continue
    checkPath(op.path)
    if (op.op === 'set') checkValue(op.value)
    else if (op.op === 'ytext') checkYtextOp(op)
    else if (op.op !== 'unset') throw new InvalidOp('op kind')
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** Shape only: whether the update is a valid Yjs update by its writer is merge's call (ytext.ts). */
function checkYtextOp(op: { path: string; update: unknown; salt: unknown }) {
  if (op.path === '') throw new InvalidOp('a text needs a path')
  if (typeof op.salt !== 'string' || op.salt.length > YTEXT_LIMITS.maxSaltLength) throw new InvalidOp('salt')
  const u = op.update
  if (typeof u !== 'string' || u.length === 0 || u.length % 4 !== 0 || u.length > Math.ceil(YTEXT_LIMITS.maxUpdateBytes / 3) * 4 || !BASE64.test(u)) {
    throw new InvalidOp('update')
  }
}
