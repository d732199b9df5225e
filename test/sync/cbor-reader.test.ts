import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { decode as cborDecode, encode as cborEncode } from 'cborg'
import { NOT_READ, readCanonical } from '../../sync/core/cbor-reader.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { applyByteEdits, byteEdits } from '../byte-edits.ts'

const CBORG = { strict: true, rejectDuplicateMapKeys: true, allowUndefined: false, allowIndefinite: false, useMaps: false } as const

/** cborg's answer: the value, or the fact that it refused the bytes. */
function cborg(bytes: Uint8Array): unknown {
  try {
    return cborDecode(bytes, CBORG)
  } catch {
    return REFUSED
  }
}
const REFUSED = Symbol('refused')

/** Strict sameness: types, -0, key order, prototypes, bytes. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a !== typeof b) return false
  if (typeof a !== 'object' || a === null || b === null) return Object.is(a, b)
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false
  if (a instanceof Uint8Array) return a.length === (b as Uint8Array).length && a.every((x, i) => x === (b as Uint8Array)[i])
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => same(x, (b as unknown[])[i]))
  const ka = Object.keys(a)
  const kb = Object.keys(b as object)
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(
      null,
      true,
      false,
      0,
      -0,
      1,
      -1,
      23,
      24,
      255,
      256,
      65535,
      65536,
      2 ** 32 - 1,
      2 ** 32,
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      0.5,
      -2.5,
      1e-7,
      5.960464477539063e-8,
      65504,
      1e300,
      3.4028234663852886e38,
    ),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string(),
    fc.string({ unit: 'grapheme' }),
    fc.uint8Array({ maxLength: 40 }),
    fc.array(tie('v'), { maxLength: 5 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('v'), { maxKeys: 5 }),
  ),
})).v

describe('readCanonical (the direct CBOR reader)', () => {
  it('reads what svc encodes to exactly what cborg decodes', () => {
    let read = 0
    fc.assert(
      fc.property(value, (v) => {
        const bytes = encodeCanonical(v)
        const fast = readCanonical(bytes)
        if (fast !== NOT_READ) read++
        expect(fast === NOT_READ || same(fast, cborg(bytes))).toBe(true)
      }),
      { numRuns: 3000 },
    )
    // The reader must actually be taking the common shapes, not passing everything on.
    expect(read).toBeGreaterThan(1500)
    expect(readCanonical(encodeCanonical({ ops: [{ op: 'set', ds: 'd', id: 'r0', path: 'f0', value: 0.5 }] }))).not.toBe(NOT_READ)
  })

  it('never accepts bytes cborg refuses, nor reads them differently (mutated encodings)', () => {
    fc.assert(
      fc.property(value, byteEdits(3), (v, edits) => {
        const bytes = applyByteEdits(encodeCanonical(v), edits)
        const fast = readCanonical(bytes)
        if (fast !== NOT_READ) expect(same(fast, cborg(bytes))).toBe(true)
      }),
      { numRuns: 5000 },
    )
  })

  it('leaves refused and unusual forms to cborg', () => {
    const cases: Array<[string, number[]]> = [
      ['non-minimal uint', [0x18, 0x05]],
      ['non-minimal length', [0x78, 0x01, 0x61]],
      ['indefinite array', [0x9f, 0x01, 0xff]],
      ['undefined', [0xf7]],
      ['NaN', [0xf9, 0x7e, 0x00]],
      ['Infinity', [0xf9, 0x7c, 0x00]],
      ['tag', [0xc1, 0x01]],
      ['-2^53', [0x3b, 0x00, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]],
      ['2^53', [0x1b, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]],
      ['trailing byte', [0x01, 0x01]],
      ['duplicate key', [0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02]],
      ['__proto__ key', [...cborEncode({ ['__proto__']: 1 })]],
      ['non-text key', [0xa1, 0x01, 0x01]],
      ['non-ASCII text', [...cborEncode('é')]],
      ['truncated', [0x62, 0x61]],
    ]
    for (const [name, bytes] of cases) expect(readCanonical(Uint8Array.from(bytes)), name).toBe(NOT_READ)
    const deep = cborEncode(JSON.parse('['.repeat(100) + ']'.repeat(100)))
    expect(readCanonical(deep)).toBe(NOT_READ)
  })
})
