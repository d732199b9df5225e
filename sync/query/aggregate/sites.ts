import { compileGetter } from '../values.ts'

/**
 * Field getters with their own call sites. V8 keeps one inline cache per property access
 * *site*, shared by every closure created there; a single getter factory serving every path of
 * every pipeline turns its `d[name]` load megamorphic (and boxes numbers), which costs ~3x on
 * `$group`. So each role of the hot loop (the `_id` path, composite `_id` parts, accumulator
 * arguments) takes its getters from a distinct site: {@link SITES} copies of the same two
 * factories (one- and two-segment plain paths). Other paths use the shared compileGetter.
 * Semantics are exactly compileGetter's.
 *
 * The copies are deliberate (one call site each): keep them identical.
 */

type R = Record<string, unknown>
type Getter = (d: unknown) => unknown

export const SITES = 12

const ONE: Array<(a: string) => Getter> = [
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
  (a) => (d) => (d as R)[a],
]

const TWO: Array<(a: string, b: string) => Getter> = [
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
  (a, b) => (d) => {
    const x = (d as R)[a]
    return typeof x !== 'object' || x === null || Array.isArray(x) ? undefined : (x as R)[b]
  },
]

const isIndexSegment = (s: string): boolean => /^(0|[1-9][0-9]{0,8})$/.test(s)

/** A getter for `segs` (as compileGetter) from call site `site` (0 <= site < SITES, else shared). */
export function siteGetter(site: number, segs: readonly string[]): Getter {
  const plain = !segs.some((s) => s in Object.prototype || isIndexSegment(s))
  if (plain && site >= 0 && site < SITES) {
    if (segs.length === 1) return ONE[site](segs[0])
    if (segs.length === 2) return TWO[site](segs[0], segs[1])
  }
  return compileGetter(segs)
}
