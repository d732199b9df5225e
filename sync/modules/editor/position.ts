/**
 * Fractional positions for `nav.pos`.
 *
 * A key is an integer part followed by a fraction, all in base 62 with the digits
 * `0-9A-Za-z` (ASCII order, so plain string comparison sorts keys by value):
 *
 * - integer part: a head character giving its length, then that many digits. `a`..`z` are the
 *   non-negative integers with 1..26 digits (`a0` is zero), `Z`..`A` the negative ones with 1..26
 *   digits. Appending at the end increments the integer, so n appends cost O(log n) characters.
 * - fraction: any digits, never ending in `0` (so every value has exactly one spelling).
 *
 * This is the well known scheme of "fractional indexing" (Figma, rocicorp), with two changes:
 *
 * 1. `keyBetween(a, b)` never returns a prefix of `b`. So any extension of the result still sorts
 *    before `b`, which is what makes the tie-breaker and batch extensions below safe.
 * 2. `posGenerator(token)` appends a short tie-breaker derived from a caller-supplied unique token
 *    (device id, change id, random bytes): two replicas inserting at the same spot compute the
 *    same midpoint but different suffixes, so their keys are distinct, deterministic and both
 *    between the neighbours. No randomness is drawn here.
 */

export const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const BASE = DIGITS.length
const ZERO_KEY = 'a0'
const SMALLEST_INTEGER = 'A' + '0'.repeat(26)
/** Characters of the tie-breaker suffix. */
export const TIE_BREAK_LENGTH = 4

const digitValue = (c: string): number => {
  const v = DIGITS.indexOf(c)
  if (v < 0 || c.length !== 1) throw new Error(`invalid position digit ${JSON.stringify(c)}`)
  return v
}

function integerLength(head: string): number {
  if (head >= 'a' && head <= 'z') return head.charCodeAt(0) - 97 + 2
  if (head >= 'A' && head <= 'Z') return 90 - head.charCodeAt(0) + 2
  throw new Error(`invalid position head ${JSON.stringify(head)}`)
}

function integerPart(key: string): string {
  const n = integerLength(key[0])
  if (n > key.length) throw new Error(`invalid position ${JSON.stringify(key)}`)
  return key.slice(0, n)
}

/** True if `key` is a well-formed position. */
export function isValidPos(key: unknown): key is string {
  if (typeof key !== 'string' || key.length === 0) return false
  try {
    const int = integerPart(key)
    if (key === SMALLEST_INTEGER) return false
    for (const c of key.slice(1)) digitValue(c)
    const frac = key.slice(int.length)
    return !frac.endsWith('0')
  } catch {
    return false
  }
}

function assertPos(key: string): void {
  if (!isValidPos(key)) throw new Error(`invalid position ${JSON.stringify(key)}`)
}

/**
 * A digit string strictly between fractions `a` and `b` (`b` null = 1). Neither may end in `0`.
 * The result is never a prefix of `b`.
 */
function midpoint(a: string, b: string | null): string {
  if (b !== null) {
    let n = 0
    while ((a[n] ?? '0') === b[n]) n++
    if (n > 0) return b.slice(0, n) + midpoint(a.slice(n), b.slice(n))
  }
  const da = a.length > 0 ? digitValue(a[0]) : 0
  const db = b !== null ? digitValue(b[0]) : BASE
  if (db - da > 1) return DIGITS[Math.round((da + db) / 2)]
  // Adjacent digits: stay on a's side and go one digit deeper. (Returning b's first digit, as the
  // classic algorithm does when b is longer, would yield a prefix of b.)
  return DIGITS[da] + midpoint(a.slice(1), null)
}

function incrementInteger(x: string): string | null {
  const head = x[0]
  const digs = x.slice(1).split('')
  let carry = true
  for (let i = digs.length - 1; carry && i >= 0; i--) {
    const d = digitValue(digs[i]) + 1
    if (d === BASE) digs[i] = '0'
    else {
      digs[i] = DIGITS[d]
      carry = false
    }
  }
  if (!carry) return head + digs.join('')
  if (head === 'Z') return ZERO_KEY
  if (head === 'z') return null
  const h = String.fromCharCode(head.charCodeAt(0) + 1)
  if (h > 'a') digs.push('0')
  else digs.pop()
  return h + digs.join('')
}

function decrementInteger(x: string): string | null {
  const head = x[0]
  const digs = x.slice(1).split('')
  let borrow = true
  for (let i = digs.length - 1; borrow && i >= 0; i--) {
    const d = digitValue(digs[i]) - 1
    if (d === -1) digs[i] = DIGITS[BASE - 1]
    else {
      digs[i] = DIGITS[d]
      borrow = false
    }
  }
  if (!borrow) return head + digs.join('')
  if (head === 'a') return 'Z' + DIGITS[BASE - 1]
  if (head === 'A') return null
  const h = String.fromCharCode(head.charCodeAt(0) - 1)
  if (h < 'Z') digs.push(DIGITS[BASE - 1])
  else digs.pop()
  return h + digs.join('')
}

/**
 * The shortest-ish key strictly between `a` and `b` (either absent for the open end), without a
 * tie-breaker. Never a prefix of `b`. Throws if `a >= b` or a key is malformed.
 */
export function keyBetween(a?: string | null, b?: string | null): string {
  if (a != null) assertPos(a)
  if (b != null) assertPos(b)
  if (a != null && b != null && a >= b) throw new Error(`position ${a} is not before ${b}`)
  if (a == null) {
    if (b == null) return ZERO_KEY
    const ib = integerPart(b)
    const fb = b.slice(ib.length)
    if (ib === SMALLEST_INTEGER) return ib + midpoint('', fb)
    // A smaller integer, never b's own integer part (that would be a prefix of b).
    const d = decrementInteger(ib)
    if (d === null) throw new Error('cannot position before the smallest key')
    return d
  }
  const ia = integerPart(a)
  const fa = a.slice(ia.length)
  if (b == null) {
    const i = incrementInteger(ia)
    return i === null ? ia + midpoint(fa, null) : i
  }
  const ib = integerPart(b)
  const fb = b.slice(ib.length)
  if (ia === ib) return ia + midpoint(fa, fb)
  const i = incrementInteger(ia)
  if (i !== null && i < b && i !== ib) return i
  return ia + midpoint(fa, null)
}

/**
 * A deterministic tie-breaker of TIE_BREAK_LENGTH base-62 characters from a token (string or
 * bytes): two FNV-1a 32-bit hashes with different offsets. Never ends in `0`.
 */
export function tieBreak(token: string | Uint8Array): string {
  const units: number[] = typeof token === 'string' ? Array.from(token, (c) => c.codePointAt(0)!) : Array.from(token)
  if (units.length === 0) throw new Error('tie-breaker token must not be empty')
  let h1 = 0x811c9dc5
  let h2 = 0x01000193 ^ 0x5bd1e995
  for (const u of units) {
    h1 = Math.imul(h1 ^ (u & 0xffff), 0x01000193) >>> 0
    h1 = Math.imul(h1 ^ (u >>> 16), 0x01000193) >>> 0
    h2 = Math.imul(h2 ^ (u & 0xffff), 0x01000193) >>> 0
    h2 = Math.imul(h2 ^ (u >>> 16), 0x01000193) >>> 0
  }
  let n = h1 * 0x100000 + (h2 >>> 12) // 52 bits, exact in a double
  let out = ''
  for (let i = 0; i < TIE_BREAK_LENGTH - 1; i++) {
    out += DIGITS[n % BASE]
    n = Math.floor(n / BASE)
  }
  return out + DIGITS[1 + (n % (BASE - 1))]
}

/**
 * A position generator for one writer: `keyBetween(before, after)` plus the token's
 * tie-breaker. Results are valid keys, strictly between the bounds and never a prefix of `after`.
 */
export function posGenerator(token: string | Uint8Array): (before?: string, after?: string) => string {
  const suffix = tieBreak(token)
  return (before, after) => keyBetween(before, after) + suffix
}

/**
 * `n` increasing fraction extensions of equal spacing (each non-empty, none ending in `0`):
 * appended to one key P they give n keys that all sort after P and before anything P sorts
 * before when P is not a prefix of it.
 */
export function spreadSuffixes(n: number): string[] {
  if (n <= 0) return []
  let len = 1
  let span = BASE
  while (span < n + 1) {
    len++
    span *= BASE
  }
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    let v = Math.floor(((i + 1) * span) / (n + 1))
    let s = ''
    for (let k = 0; k < len; k++) {
      s = DIGITS[v % BASE] + s
      v = Math.floor(v / BASE)
    }
    out.push(s.replace(/0+$/, ''))
  }
  return out
}

/**
 * `n` increasing keys strictly between `before` and `after` for one run of inserts. With n = 1
 * it is `newPos(before, after)`; otherwise every key extends that one key, so a run inserted by
 * one replica stays contiguous and never interleaves with a run another replica inserted at the
 * same spot. Falls back to one `newPos` call per key if `newPos` broke its contract.
 */
export function positionsBetween(newPos: (before?: string, after?: string) => string, before: string | undefined, after: string | undefined, n: number): string[] {
  if (n <= 0) return []
  const base = newPos(before, after)
  if (n === 1) return [base]
  const keys = spreadSuffixes(n - 1).map((s) => base + s)
  keys.unshift(base)
  const last = keys[keys.length - 1]
  if ((before === undefined || base > before) && (after === undefined || last < after) && isValidPos(last)) return keys
  const out: string[] = []
  let prev = before
  for (let i = 0; i < n; i++) {
    prev = newPos(prev, after)
    out.push(prev)
  }
  return out
}
