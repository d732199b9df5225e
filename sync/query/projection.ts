import { SvcError } from '../core/errors.ts'
import { type Doc, hasOwn, isPlainObject, parsePath } from './values.ts'

/**
 * Mongo-ish projections on dotted paths.
 *
 * - Inclusion `{a: 1, 'b.c': 1}`: only those paths (plus `id`). Exclusion `{x: 0, 'y.z': 0}`:
 *   everything but those paths. Values are 1/0 or true/false; anything else, or mixing
 *   inclusion and exclusion, is 400 `request.invalid_field` (`details.field: 'projection'`).
 * - `id` is always included unless explicitly excluded; `{id: 0}` may accompany an inclusion.
 * - Overlapping paths: the shorter one wins (`{a: 1, 'a.b': 1}` keeps all of `a`).
 * - An array on the way applies the rest of the projection to each object element; under an
 *   inclusion, non-object elements are dropped (Mongo does the same).
 * - `{}` or no projection returns records unchanged (same object, not a copy).
 *
 * Ops in live frames are projected too ({@link Projection.op}): an op under a hidden path is
 * dropped, an op above a partially visible path carries its value projected.
 */

export interface Projection {
  readonly kind: 'all' | 'include' | 'exclude'
  apply(doc: Doc): Doc
  /** The op as the subscriber may see it, or null when it touches only hidden paths. */
  op<O extends FrameOp>(op: O): O | null
}

export interface FrameOp {
  type: '$set' | '$unset'
  path: string
  value?: unknown
}

/** Tree of projected paths: `true` ends a path (whole subtree). */
type Node = Map<string, Node | true>

export const MAX_PROJECTION_PATHS = 256

const bad = (message: string) => new SvcError('request.invalid_field', message, { field: 'projection' })

const ALL: Projection = { kind: 'all', apply: (d) => d, op: (o) => o }

export function compileProjection(spec: unknown): Projection {
  if (spec === undefined || spec === null) return ALL
  if (!isPlainObject(spec)) throw bad('projection must be an object')
  const keys = Object.keys(spec)
  if (keys.length > MAX_PROJECTION_PATHS) throw bad(`projection takes at most ${MAX_PROJECTION_PATHS} paths`)
  let mode: 'include' | 'exclude' | undefined
  let idOff = false
  const tree: Node = new Map()
  for (const k of keys) {
    const v = spec[k]
    let on: boolean
    if (v === 1 || v === true) on = true
    else if (v === 0 || v === false) on = false
    else throw bad('projection values must be 1, 0, true or false')
    const segs = parsePath(k)
    if (!segs) throw bad('malformed projection path')
    if (k === 'id') {
      if (!on) idOff = true
      continue
    }
    const m = on ? 'include' : 'exclude'
    if (mode && mode !== m) throw bad('projection cannot mix inclusion and exclusion')
    mode = m
    addPath(tree, segs)
  }
  if (!mode) {
    if (!idOff) return ALL
    mode = 'exclude'
  }
  if (mode === 'include') {
    if (!idOff) tree.set('id', true)
    return {
      kind: 'include',
      apply: (d) => include(d, tree) as Doc,
      op: (o) => projectOp(o, tree, true),
    }
  }
  if (idOff) tree.set('id', true)
  return {
    kind: 'exclude',
    apply: (d) => exclude(d, tree) as Doc,
    op: (o) => projectOp(o, tree, false),
  }
}

function addPath(tree: Node, segs: string[]): void {
  let cur = tree
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]
    const hit = cur.get(s)
    if (hit === true) return
    if (i === segs.length - 1) {
      cur.set(s, true)
      return
    }
    let next = hit
    if (!next) cur.set(s, (next = new Map()))
    cur = next
  }
}

function include(v: unknown, node: Node): unknown {
  if (Array.isArray(v)) {
    const out: unknown[] = []
    for (const el of v) if (isPlainObject(el) || Array.isArray(el)) out.push(include(el, node))
    return out
  }
  if (!isPlainObject(v)) return undefined
  const out: Record<string, unknown> = {}
  for (const [k, sub] of node) {
    if (!hasOwn(v, k)) continue
    const x = v[k]
    if (sub === true) out[k] = x
    else if (isPlainObject(x) || Array.isArray(x)) out[k] = include(x, sub)
  }
  return out
}

function exclude(v: unknown, node: Node): unknown {
  if (Array.isArray(v)) return (v as unknown[]).map((el) => (isPlainObject(el) || Array.isArray(el) ? exclude(el, node) : el))
  if (!isPlainObject(v)) return v
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(v)) {
    const sub = node.get(k)
    if (sub === true) continue
    out[k] = sub ? exclude(v[k], sub) : v[k]
  }
  return out
}

/**
 * Walks the op's path down the tree. Inclusion: visible when a projected path covers it; when
 * it lies above projected paths its value is projected; otherwise hidden. Exclusion: the mirror.
 */
function projectOp<O extends FrameOp>(o: O, tree: Node, inclusion: boolean): O | null {
  const segs = o.path === '' ? [] : o.path.split('.')
  let node: Node = tree
  for (const s of segs) {
    const sub = node.get(s)
    if (sub === true) return inclusion ? o : null
    if (!sub && /^[0-9]+$/.test(s)) continue // an array index: the projection applies per element
    if (!sub) return inclusion ? null : o
    node = sub
  }
  if (o.type !== '$set') return o
  const value = inclusion ? include(o.value, node) : exclude(o.value, node)
  if (inclusion && value === undefined) return null
  return { ...o, value }
}
