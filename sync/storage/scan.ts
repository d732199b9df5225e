import type { ScanOptions, WriteBatch } from './adapter.ts'
import { compareUtf8 } from '../core/utf8-order.ts'
export { compareUtf8 }

/**
 * Helpers shared by the storage adapters: batch and option validation, key order, and range
 * scans over a sorted key array (the memory adapter).
 */

/** Applies scan options to keys already sorted ascending by {@link compareUtf8}. */
export function scanSorted(keys: readonly string[], o: ScanOptions): string[] {
  const limit = scanLimit(o)
  if (limit === 0) return []
  let lo = 0
  let hi = keys.length
  if (o.gt !== undefined) lo = upperBound(keys, o.gt, 0, hi)
  if (o.lt !== undefined) hi = lowerBound(keys, o.lt, lo, hi)
  const prefix = o.prefix
  if (prefix) {
    // Keys with the prefix are contiguous: [first >= prefix, first after it without the prefix).
    lo = Math.max(lo, lowerBound(keys, prefix, lo, hi))
    let a = lo
    let b = hi
    while (a < b) {
      const mid = (a + b) >>> 1
      if (keys[mid].startsWith(prefix)) a = mid + 1
      else b = mid
    }
    hi = a
  }
  const n = Math.max(0, Math.min(hi - lo, limit ?? Infinity))
  return o.reverse ? keys.slice(hi - n, hi).reverse() : keys.slice(lo, lo + n)
}

/** `limit` as a count: undefined for no limit, 0 for "nothing" (negative limits included). */
export function scanLimit(o: ScanOptions): number | undefined {
  if (o.limit === undefined) return undefined
  if (!(o.limit > 0)) return 0
  return Math.floor(o.limit) || 0
}

/** Index of the first key >= k within [lo, hi). */
export function lowerBound(keys: readonly string[], k: string, lo = 0, hi = keys.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareUtf8(keys[mid], k) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Index of the first key > k within [lo, hi). */
export function upperBound(keys: readonly string[], k: string, lo = 0, hi = keys.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareUtf8(keys[mid], k) <= 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The smallest string above every string that starts with `prefix`, in code point (UTF-8 byte)
 * order, or undefined when there is none (the prefix is all U+10FFFF). Keys starting with
 * `prefix` are exactly those k with prefix <= k < successor.
 */
export function prefixSuccessorUtf8(prefix: string): string | undefined {
  const cps = Array.from(prefix, (c) => c.codePointAt(0)!)
  while (cps.length > 0) {
    const last = cps.pop()!
    if (last < 0x10ffff) {
      cps.push(last + 1 === 0xd800 ? 0xe000 : last + 1)
      return String.fromCodePoint(...cps)
    }
  }
  return undefined
}

/** {@link prefixSuccessorUtf8} for UTF-16 code unit order (IndexedDB's string key order). */
export function prefixSuccessorUtf16(prefix: string): string | undefined {
  let end = prefix.length
  while (end > 0 && prefix.charCodeAt(end - 1) === 0xffff) end--
  if (end === 0) return undefined
  return prefix.slice(0, end - 1) + String.fromCharCode(prefix.charCodeAt(end - 1) + 1)
}

const LONE_SURROGATE = /\p{Cs}/u
// ES2024's native check (Node 20+, current browsers) runs on every key of every commit; the
// regex is the fallback for older engines.
const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s)

/**
 * Store names and keys must be well-formed UTF-16 strings: SQLite stores text as UTF-8 and
 * would silently rewrite a lone surrogate, so every adapter rejects them the same way.
 */
export function checkName(what: 'store' | 'key', s: unknown): void {
  if (typeof s !== 'string') throw new TypeError(`storage: ${what} must be a string, got ${typeof s}`)
  if (!isWellFormed(s)) throw new TypeError(`storage: ${what} contains a lone surrogate`)
}

export function isBytes(v: unknown): v is Uint8Array {
  return ArrayBuffer.isView(v) && (v as { [Symbol.toStringTag]?: string })[Symbol.toStringTag] === 'Uint8Array'
}

/**
 * Validates a whole batch before anything is written, so a bad entry anywhere rejects the
 * commit with nothing applied, the same way on every adapter.
 */
export function checkBatch(batch: WriteBatch): void {
  for (const p of batch.puts) {
    checkName('store', p.store)
    checkName('key', p.key)
    if (!isBytes(p.value)) throw new TypeError(`storage: value for key ${JSON.stringify(p.key)} is not a Uint8Array`)
  }
  for (const d of batch.dels) {
    checkName('store', d.store)
    checkName('key', d.key)
  }
}

export function checkScanOptions(o: ScanOptions): void {
  if (o.prefix !== undefined) checkName('key', o.prefix)
  if (o.gt !== undefined) checkName('key', o.gt)
  if (o.lt !== undefined) checkName('key', o.lt)
}
