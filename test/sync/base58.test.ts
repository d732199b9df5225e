import { describe, expect, it } from 'vitest'
import bs58 from 'bs58'
import fc from 'fast-check'
import { fromBase58, toBase58 } from '../../sync/core/ids.ts'

describe('toBase58', () => {
  it('equals bs58 on every input, leading zeros and empty included', () => {
    for (const b of [
      new Uint8Array(0),
      new Uint8Array(1),
      new Uint8Array(5),
      Uint8Array.of(0, 0, 1),
      Uint8Array.of(255),
      new Uint8Array(32).fill(255),
      Uint8Array.of(57),
      Uint8Array.of(58),
      new Uint8Array(300).fill(201),
      Uint8Array.from({ length: 200 }, (_, i) => (i * 37) % 256),
    ]) {
      expect(toBase58(b)).toBe(bs58.encode(b))
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.nat(4), (body, zeros) => {
        const b = new Uint8Array(zeros + body.length)
        b.set(body, zeros)
        const s = toBase58(b)
        expect(s).toBe(bs58.encode(b))
        expect(fromBase58(s)).toEqual(b)
      }),
      { numRuns: 2000 },
    )
  })
})
