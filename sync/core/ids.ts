import bs58 from 'bs58'
import { asciiString } from './ascii.ts'

const scratchLimbs: number[] = []

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
// 58^5 < 2^30: a limb times 2^16 plus a carry stays below 2^53, so plain numbers are exact.
const LIMB = 58 ** 5

/**
 * Base58 (Bitcoin alphabet), byte-identical to bs58. Every change id is one of these, computed
 * on every ingested change; bs58's digit-at-a-time conversion cost ~5 µs for a 32-byte hash, so
 * the conversion runs on base-58^5 limbs (five digits per division) instead. Decoding is rare
 * and stays with bs58.
 */
export function toBase58(bytes: Uint8Array): string {
  let zeros = 0
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++
  // Little-endian limbs of the number the bytes spell, in base 58^5.
  // Two bytes per step (58^5 * 2^16 < 2^53 still), halving the passes over the limbs; an odd
  // leading byte goes first on its own.
  const limbs = scratchLimbs
  limbs.length = 0
  let i = zeros
  if ((bytes.length - zeros) % 2 === 1) limbs.push(bytes[i++])
  for (; i < bytes.length; i += 2) {
    let carry = bytes[i] * 256 + bytes[i + 1]
    for (let j = 0; j < limbs.length; j++) {
      const x = limbs[j] * 65536 + carry
      carry = Math.floor(x / LIMB)
      limbs[j] = x - carry * LIMB
    }
    while (carry > 0) {
      const q = Math.floor(carry / LIMB)
      limbs.push(carry - q * LIMB)
      carry = q
    }
  }
  // Digits are gathered as char codes and turned into one flat string at the end: prepending
  // characters builds a chain of cons strings, which V8 must flatten on the first hash or
  // compare, and ids are Map keys everywhere (that flattening cost ~1 µs per id in apply).
  // Limbs and digits live in scratch buffers: this runs once per change id.
  // Least significant digit first, from the end of the scratch buffer backwards.
  const digits = limbs.length * 5 + zeros
  if (scratchDigits.length < digits) scratchDigits = new Uint8Array(digits * 2)
  const out = scratchDigits
  let at = out.length
  for (let j = 0; j < limbs.length; j++) {
    let limb = limbs[j]
    const last = j === limbs.length - 1
    for (let k = 0; k < 5 && (!last || limb > 0); k++) {
      const q = Math.floor(limb / 58)
      out[--at] = ALPHABET_CODES[limb - q * 58]
      limb = q
    }
  }
  for (let i = 0; i < zeros; i++) out[--at] = ONE
  return asciiString(out, at, out.length)
}

let scratchDigits = new Uint8Array(96)

const ALPHABET_CODES = Array.from(ALPHABET, (ch) => ch.charCodeAt(0))
const ONE = ALPHABET_CODES[0]

export const fromBase58 = (s: string): Uint8Array => bs58.decode(s)

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/
export const isBase58 = (s: unknown): s is string => typeof s === 'string' && s.length > 0 && BASE58.test(s)
