import type { ScanOptions } from './adapter.ts'

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

/** Compares strings by UTF-8 byte order (the order SQLite and the spec of StorageAdapter use). */
export function compareUtf8(a: string, b: string): number {
  // UTF-16 code unit order equals UTF-8 byte order except for surrogates vs U+E000..U+FFFF.
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    if (x >= 0xd800 && x <= 0xdfff) x += 0x2000
    else if (x >= 0xe000) x -= 0x800
    if (y >= 0xd800 && y <= 0xdfff) y += 0x2000
    else if (y >= 0xe000) y -= 0x800
    return x - y
  }
  return a.length - b.length
}
