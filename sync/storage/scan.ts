import type { ScanOptions } from './adapter.ts'
import { compareUtf8 } from './memory.ts'

/** Applies scan options to keys already sorted ascending. */
export function scanSorted(keys: readonly string[], o: ScanOptions): string[] {
  let lo = 0
  let hi = keys.length
  const lower = o.gt
  if (lower !== undefined) lo = upperBound(keys, lower)
  if (o.prefix) lo = Math.max(lo, lowerBound(keys, o.prefix))
  if (o.lt !== undefined) hi = Math.min(hi, lowerBound(keys, o.lt))
  const out: string[] = []
  if (o.reverse) {
    for (let i = hi - 1; i >= lo && (o.limit === undefined || out.length < o.limit); i--) {
      if (o.prefix && !keys[i].startsWith(o.prefix)) {
        if (compareUtf8(keys[i], o.prefix) > 0) continue
        break
      }
      out.push(keys[i])
    }
  } else {
    for (let i = lo; i < hi && (o.limit === undefined || out.length < o.limit); i++) {
      if (o.prefix && !keys[i].startsWith(o.prefix)) break
      out.push(keys[i])
    }
  }
  return out
}

function lowerBound(keys: readonly string[], k: string): number {
  let lo = 0
  let hi = keys.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareUtf8(keys[mid], k) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

function upperBound(keys: readonly string[], k: string): number {
  let lo = 0
  let hi = keys.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareUtf8(keys[mid], k) <= 0) lo = mid + 1
    else hi = mid
  }
  return lo
}
