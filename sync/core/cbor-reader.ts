/* eslint-disable @typescript-eslint/only-throw-error -- a refusal throws one preallocated sentinel, caught by the caller, which then decodes with cborg: no stack is captured per refusal on the ingest path. */
import { asciiString } from './ascii.ts'

/**
 * A direct reader for the canonical CBOR svc writes most: maps with text keys, arrays, text,
 * byte strings, integers, floats, booleans and null. cborg's decoder builds a token object per
 * item; this walks the bytes once, which decodes a typical change payload in about 2 µs
 * against cborg's 3–5 µs (measured here), on the ingest thread where every change pays it.
 *
 * It returns exactly what `decodeCanonical` (cborg, strict, objects not Maps, no undefined)
 * returns for the bytes it reads, and NOT_READ for anything it does not read itself, which the
 * caller then hands to cborg: non-minimal integer or length forms (cborg refuses them),
 * indefinite lengths, tags, undefined and other simple values, NaN and infinities, integers
 * beyond 2^53, non-ASCII text (cborg's UTF-8 decoding keeps the last word), duplicate or
 * `__proto__` map keys, deep nesting, and trailing bytes. test/sync/cbor-reader.test.ts fuzzes
 * the agreement.
 */
export const NOT_READ: unique symbol = Symbol('not read')

const MAX_DEPTH = 64

/** Thrown by a cursor on anything it leaves to cborg; readers turn it into NOT_READ. */
export const UNUSUAL: unique symbol = Symbol('unusual')

/**
 * `views`: byte strings come back as views into `bytes` instead of copies, for a caller that
 * owns `bytes` and keeps them unchanged (a received block frame: its 1 MiB is not copied again).
 */
export function readCanonical(bytes: Uint8Array, views = false): unknown {
  const r = new Walker(bytes, views)
  try {
    const v = r.item(0)
    return r.pos === bytes.length ? v : NOT_READ
  } catch (err) {
    if (err === UNUSUAL) return NOT_READ
    throw err
  }
}

/**
 * Position in canonical CBOR bytes, with the one rule both direct readers share: item heads
 * in their minimal form only (what cborg's strict mode demands), arguments below 2^53.
 */
export class CborCursor {
  // Fields declared, not parameter properties: erasable syntax, so Node runs this file without
  // a TypeScript loader (the files block crypto thread imports it that way).
  protected readonly b: Uint8Array
  pos: number
  protected readonly end: number
  constructor(b: Uint8Array, pos: number, end: number) {
    this.b = b
    this.pos = pos
    this.end = end
  }

  /** Reads an item head of `major` and returns its argument. */
  head(major: number): number {
    if (this.pos >= this.end) throw UNUSUAL
    const first = this.b[this.pos++]
    if (first >> 5 !== major) throw UNUSUAL
    return this.arg(first & 0x1f)
  }

  /** The argument of an item head whose first byte was just read. */
  protected arg(info: number): number {
    if (info < 24) return info
    const b = this.b
    const p = this.pos
    let n: number
    if (info === 24) {
      this.need(1)
      n = b[p]
      this.pos += 1
      if (n < 24) throw UNUSUAL
    } else if (info === 25) {
      this.need(2)
      n = (b[p] << 8) | b[p + 1]
      this.pos += 2
      if (n < 0x100) throw UNUSUAL
    } else if (info === 26) {
      this.need(4)
      n = b[p] * 0x1000000 + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3])
      this.pos += 4
      if (n < 0x10000) throw UNUSUAL
    } else if (info === 27) {
      this.need(8)
      const hi = b[p] * 0x1000000 + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3])
      const lo = b[p + 4] * 0x1000000 + ((b[p + 5] << 16) | (b[p + 6] << 8) | b[p + 7])
      this.pos += 8
      // Above 2^53 cborg yields a BigInt; leave that (and non-minimal forms) to it.
      if (hi === 0 || hi >= 0x200000) throw UNUSUAL
      n = hi * 0x100000000 + lo
    } else throw UNUSUAL // indefinite lengths and reserved forms
    return n
  }

  protected need(n: number) {
    if (this.end - this.pos < n) throw UNUSUAL
  }
}

class Walker extends CborCursor {
  private view: DataView | undefined
  private readonly views: boolean
  constructor(b: Uint8Array, views: boolean) {
    super(b, 0, b.length)
    this.views = views
  }

  item(depth: number): unknown {
    if (depth > MAX_DEPTH || this.pos >= this.b.length) throw UNUSUAL
    const first = this.b[this.pos++]
    const major = first >> 5
    const info = first & 0x1f
    switch (major) {
      case 0:
        return this.arg(info)
      case 1: {
        const n = this.arg(info)
        if (n === Number.MAX_SAFE_INTEGER) throw UNUSUAL // -2^53: cborg refuses it
        return -1 - n
      }
      case 2: {
        const n = this.arg(info)
        this.need(n)
        if (this.views) {
          const view = new Uint8Array(this.b.buffer, this.b.byteOffset + this.pos, n)
          this.pos += n
          return view
        }
        // A plain Uint8Array of its own, as cborg gives (slice on a Buffer would give a Buffer view).
        const out = new Uint8Array(n)
        out.set(this.b.subarray(this.pos, this.pos + n))
        this.pos += n
        return out
      }
      case 3:
        return this.text(this.arg(info))
      case 4: {
        const n = this.arg(info)
        if (n > this.b.length - this.pos) throw UNUSUAL
        const arr: unknown[] = []
        for (let i = 0; i < n; i++) arr[i] = this.item(depth + 1)
        return arr
      }
      case 5: {
        const n = this.arg(info)
        if (n > this.b.length - this.pos) throw UNUSUAL
        const obj: Record<string, unknown> = {}
        for (let i = 0; i < n; i++) {
          if (this.pos >= this.b.length || this.b[this.pos] >> 5 !== 3) throw UNUSUAL
          const k = this.text(this.arg(this.b[this.pos++] & 0x1f))
          if (k === '__proto__' || Object.hasOwn(obj, k)) throw UNUSUAL
          obj[k] = this.item(depth + 1)
        }
        return obj
      }
      case 7:
        return this.simple(info)
      default:
        throw UNUSUAL // tags
    }
  }

  private text(n: number): string {
    this.need(n)
    const b = this.b
    const end = this.pos + n
    for (let i = this.pos; i < end; i++) if (b[i] >= 0x80) throw UNUSUAL
    const s = asciiString(b, this.pos, end)
    this.pos = end
    return s
  }

  private simple(info: number): unknown {
    if (info === 20) return false
    if (info === 21) return true
    if (info === 22) return null
    let v: number
    if (info === 25) {
      this.need(2)
      v = half((this.b[this.pos] << 8) | this.b[this.pos + 1])
      this.pos += 2
    } else if (info === 26) {
      this.need(4)
      v = this.dv().getFloat32(this.pos)
      this.pos += 4
    } else if (info === 27) {
      this.need(8)
      v = this.dv().getFloat64(this.pos)
      this.pos += 8
    } else throw UNUSUAL // undefined, other simple values, break
    if (!Number.isFinite(v)) throw UNUSUAL
    return v
  }

  private dv(): DataView {
    return (this.view ??= new DataView(this.b.buffer, this.b.byteOffset, this.b.byteLength))
  }
}

/** IEEE 754 half precision to a number, as cborg computes it (non-finite ones are refused after). */
function half(h: number): number {
  const exp = (h >> 10) & 0x1f
  const mant = h & 0x3ff
  const val = exp === 0 ? mant * 2 ** -24 : exp !== 31 ? (mant + 1024) * 2 ** (exp - 25) : mant === 0 ? Infinity : NaN
  return h & 0x8000 ? -val : val
}
