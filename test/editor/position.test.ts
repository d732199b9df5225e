import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { DIGITS, TIE_BREAK_LENGTH, isValidPos, keyBetween, posGenerator, positionsBetween, spreadSuffixes, tieBreak } from '../../sync/modules/editor/position.ts'

/** Arbitrary well-formed positions. */
const posArb = fc
  .tuple(
    fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('')),
    fc.array(fc.constantFrom(...DIGITS.split('')), { minLength: 26, maxLength: 26 }),
    fc.array(fc.constantFrom(...DIGITS.split('')), { maxLength: 8 }),
  )
  .map(([head, intDigits, frac]) => {
    const len = head >= 'a' ? head.charCodeAt(0) - 97 + 1 : 90 - head.charCodeAt(0) + 1
    return head + intDigits.slice(0, len).join('') + frac.join('').replace(/0+$/, '')
  })
  .filter((k) => isValidPos(k))

const tokenArb = fc.string({ minLength: 1, maxLength: 20 })

describe('keyBetween', () => {
  it('starts at a0 and sorts with plain string comparison', () => {
    expect(keyBetween()).toBe('a0')
    const a = keyBetween()
    const b = keyBetween(a)
    const c = keyBetween(b)
    const z = keyBetween(undefined, a)
    const m = keyBetween(a, b)
    expect([c, m, a, z, b].sort()).toEqual([z, a, m, b, c])
  })

  it('keeps keys short when appending or prepending', () => {
    let last: string | undefined
    for (let i = 0; i < 10_000; i++) last = keyBetween(last)
    expect(last!.length).toBeLessThanOrEqual(4)
    let first: string | undefined
    for (let i = 0; i < 10_000; i++) first = keyBetween(undefined, first)
    expect(first!.length).toBeLessThanOrEqual(4)
  })

  it('rejects malformed or unordered bounds', () => {
    expect(() => keyBetween('a1', 'a0')).toThrow()
    expect(() => keyBetween('a1', 'a1')).toThrow()
    expect(() => keyBetween('a10')).toThrow() // trailing zero in the fraction
    expect(() => keyBetween('!')).toThrow()
    expect(isValidPos('a0')).toBe(true)
    expect(isValidPos('b1')).toBe(false) // integer part too short
    expect(isValidPos('')).toBe(false)
  })

  it('never returns a prefix of the upper bound', () => {
    // the classic algorithm answers "a1" here, a prefix of "a1V"
    expect(keyBetween('a0', 'a1V').startsWith('a1')).toBe(false)
    expect(keyBetween(undefined, 'a0V')).not.toBe('a0')
  })
})

describe('posGenerator', () => {
  it('gives distinct, deterministic keys to concurrent inserts at the same spot', () => {
    const before = 'a0'
    const after = 'a1'
    const genA = posGenerator('device-A')
    const genB = posGenerator('device-B')
    const ka = genA(before, after)
    const kb = genB(before, after)
    expect(ka).not.toBe(kb)
    for (const k of [ka, kb]) {
      expect(k > before && k < after).toBe(true)
      expect(isValidPos(k)).toBe(true)
    }
    // deterministic: the same token at the same spot gives the same key
    expect(posGenerator('device-A')(before, after)).toBe(ka)
    // and every replica sorts them the same way
    expect([kb, ka].sort()).toEqual([ka, kb].sort())
  })

  it('accepts bytes as the token (e.g. random bytes from Env)', () => {
    const k = posGenerator(new Uint8Array([1, 2, 3, 250]))('a0', 'a1')
    expect(k > 'a0' && k < 'a1').toBe(true)
    expect(() => tieBreak('')).toThrow()
  })

  it('keeps a concurrently inserted run contiguous (no interleaving)', () => {
    const runA = positionsBetween(posGenerator('A'), 'a0', 'a1', 5)
    const runB = positionsBetween(posGenerator('B'), 'a0', 'a1', 4)
    const merged = [...runA.map((k) => ['A', k]), ...runB.map((k) => ['B', k])].sort((x, y) => (x[1] < y[1] ? -1 : 1))
    const owners = merged.map((x) => x[0]).join('')
    expect(['AAAAABBBB', 'BBBBAAAAA']).toContain(owners)
    expect(new Set([...runA, ...runB]).size).toBe(9)
  })

  it('spreads n keys with O(log n) growth', () => {
    const keys = positionsBetween(posGenerator('A'), 'a0', 'a1', 1000)
    expect([...keys].sort()).toEqual(keys)
    expect(new Set(keys).size).toBe(1000)
    expect(Math.max(...keys.map((k) => k.length))).toBeLessThanOrEqual(2 + 1 + TIE_BREAK_LENGTH + 2)
    expect(spreadSuffixes(3).every((s) => s.length > 0 && !s.endsWith('0'))).toBe(true)
  })
})

describe('position properties', () => {
  it('keyBetween is strictly between its bounds, valid, and never a prefix of the upper bound', () => {
    fc.assert(
      fc.property(posArb, posArb, (x, y) => {
        fc.pre(x !== y)
        const [a, b] = x < y ? [x, y] : [y, x]
        const k = keyBetween(a, b)
        return isValidPos(k) && a < k && k < b && !b.startsWith(k)
      }),
      { numRuns: 2000 },
    )
  })

  it('open-ended keys sort before or after their bound', () => {
    fc.assert(
      fc.property(posArb, (a) => {
        const up = keyBetween(a)
        const down = keyBetween(undefined, a)
        return isValidPos(up) && isValidPos(down) && down < a && a < up
      }),
      { numRuns: 1000 },
    )
  })

  it('generated keys always sort between their bounds, tie-breaker included', () => {
    fc.assert(
      fc.property(posArb, posArb, tokenArb, tokenArb, fc.integer({ min: 1, max: 40 }), (x, y, t1, t2, n) => {
        fc.pre(x !== y)
        const [a, b] = x < y ? [x, y] : [y, x]
        const k1 = posGenerator(t1)(a, b)
        const k2 = posGenerator(t2)(a, b)
        const run = positionsBetween(posGenerator(t1), a, b, n)
        const sortedRun = run.every((k, i) => i === 0 || run[i - 1] < k)
        return (
          a < k1 &&
          k1 < b &&
          a < k2 &&
          k2 < b &&
          isValidPos(k1) &&
          (tieBreak(t1) === tieBreak(t2) || k1 !== k2) &&
          sortedRun &&
          run[0] > a &&
          run[run.length - 1] < b &&
          run.every(isValidPos)
        )
      }),
      { numRuns: 1000 },
    )
  })

  it('random concurrent editing keeps every list sorted and collision-free', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), fc.constantFrom('A', 'B', 'C')), { minLength: 1, maxLength: 200 }), (ops) => {
        const keys: string[] = []
        const gens = { A: posGenerator('A'), B: posGenerator('B'), C: posGenerator('C') }
        for (const [at, who] of ops) {
          const i = at % (keys.length + 1)
          const k = gens[who](keys[i - 1], keys[i])
          keys.splice(i, 0, k)
        }
        return new Set(keys).size === keys.length && keys.every((k, i) => i === 0 || keys[i - 1] < k)
      }),
      { numRuns: 300 },
    )
  })

  it('tie-breakers are fixed-length base-62 and never end in 0', () => {
    fc.assert(
      fc.property(tokenArb, (t) => {
        const s = tieBreak(t)
        return s.length === TIE_BREAK_LENGTH && Array.from(s).every((c) => DIGITS.includes(c)) && !s.endsWith('0')
      }),
    )
  })
})
