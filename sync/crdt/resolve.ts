import type { Json } from './ops.ts'
import { checkPath, checkValue, InvalidOp } from './ops.ts'
import { deepEqual, getPath, withPath } from './path.ts'

/** An op as callers write it (spec "Modify and upsert bodies"). */
export interface UserOp {
  type: '$set' | '$unset' | '$inc' | '$addToSet' | '$pull'
  path: string
  value?: unknown
}

export type ResolvedOp = { k: 'set'; p: string; v: Json } | { k: 'unset'; p: string }

export interface ResolveRejection {
  index: number
  code: string
  reason: string
}

/**
 * Turns `$inc`, `$addToSet` and `$pull` into the `$set` of their result against the writer's
 * current record, so merge only ever sees set/unset (DESIGN 2). Ops apply in order, each
 * seeing the ones before it; a bad op is rejected alone.
 */
export function resolveUserOps(current: Json | undefined, ops: readonly UserOp[]): { ops: ResolvedOp[]; doc: Json | undefined; rejections: ResolveRejection[] } {
  let doc = current
  const out: ResolvedOp[] = []
  const rejections: ResolveRejection[] = []
  ops.forEach((op, index) => {
    const reject = (reason: string) => rejections.push({ index, code: 'dataset.validation', reason })
    try {
      checkPath(op.path)
      if (op.type !== '$unset' && op.value === undefined) return reject(`${op.type} needs a value`)
      if (op.value !== undefined) checkValue(op.value)
    } catch (err) {
      return reject(err instanceof InvalidOp ? err.reason : 'invalid value')
    }
    const cur = getPath(doc, op.path)
    let r: ResolvedOp
    switch (op.type) {
      case '$set':
        if (op.path === '' && (typeof op.value !== 'object' || op.value === null || Array.isArray(op.value))) {
          return reject('the whole record must be an object')
        }
        r = { k: 'set', p: op.path, v: op.value as Json }
        break
      case '$unset':
        r = { k: 'unset', p: op.path }
        break
      case '$inc':
        if (typeof op.value !== 'number') return reject('$inc needs a number')
        if (cur !== undefined && typeof cur !== 'number') return reject('$inc on a non-number')
        r = { k: 'set', p: op.path, v: (cur ?? 0) + op.value }
        break
      case '$addToSet': {
        if (cur !== undefined && !Array.isArray(cur)) return reject('$addToSet on a non-array')
        const arr = cur ?? []
        r = { k: 'set', p: op.path, v: arr.some((x) => deepEqual(x, op.value as Json)) ? arr : [...arr, op.value as Json] }
        break
      }
      case '$pull': {
        if (cur !== undefined && !Array.isArray(cur)) return reject('$pull on a non-array')
        r = { k: 'set', p: op.path, v: (cur ?? []).filter((x) => !deepEqual(x, op.value as Json)) }
        break
      }
      default:
        return reject('unknown op type')
    }
    if (op.path === '' && r.k === 'set' && op.type !== '$set') return reject(`${op.type} needs a path`)
    doc = withPath(doc, r.p, r.k === 'set' ? r.v : undefined)
    out.push(r)
  })
  return { ops: out, doc, rejections }
}
