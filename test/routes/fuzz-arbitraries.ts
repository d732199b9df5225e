import fc from 'fast-check'
import { families, type Family, type Schema } from './fuzz-openapi.ts'

/**
 * Values for the fuzz test (fuzz.test.ts): fast-check arbitraries for JSON of each type and for
 * filters that cannot be valid, fixed lists of bad path ids, bad JSON texts and wrong content
 * types, very deep and very large bodies, and a sampler whose every draw takes the next seed
 * (so the requests are the same on every run).
 */

export const KNOWN_OPS = new Set([
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$exists',
  '$not',
  '$all',
  '$size',
  '$elemMatch',
  '$text',
  '$and',
  '$or',
  '$nor',
  '$date',
  '$search',
])
export const HUGE = 'x'.repeat(1024 * 1024 + 17)

export const deepArray = (n: number, leaf = '0') => '['.repeat(n) + leaf + ']'.repeat(n)
export const deepObject = (n: number, key = 'a') => `{"${key}":`.repeat(n) + '1' + '}'.repeat(n)

export const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
)
export const anyJson = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 6 }), tie('v'), { maxKeys: 3 })),
})).v
export const ofFamily = (f: Family): fc.Arbitrary<unknown> => {
  switch (f) {
    case 'string':
      return fc.oneof(fc.string({ maxLength: 10 }), fc.string({ unit: 'binary', maxLength: 6 }))
    case 'number':
      return fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(-0, 1e308, Number.MAX_SAFE_INTEGER + 2))
    case 'boolean':
      return fc.boolean()
    case 'object':
      return fc.dictionary(fc.string({ maxLength: 6 }), anyJson, { minKeys: 0, maxKeys: 3 })
    case 'array':
      return fc.array(anyJson, { maxLength: 4 })
    case 'null':
      return fc.constant(null)
  }
}
/** A value of the field's own type, roughly (may or may not pass the finer rules). */
export const plausible = (s: Schema): fc.Arbitrary<unknown> => {
  if (s.enum) return fc.constantFrom(...s.enum)
  const fam = families(s)
  return fam ? fc.oneof(...[...fam].map(ofFamily)) : anyJson
}
export const badFilter = fc.oneof(
  fc
    .record({ p: fc.constantFrom('a', 'core.name', 'x.y', 'id'), op: fc.stringMatching(/^[a-z]{1,8}$/).map((s) => `$zz${s}`), v: anyJson })
    .map(({ p, op, v }) => ({ [p]: { [op]: v } })),
  fc
    .stringMatching(/^[a-z]{1,8}$/)
    .map((s) => ({ [`$${s}`]: 1 }))
    .filter((f) => !KNOWN_OPS.has(Object.keys(f)[0])),
  fc
    .constantFrom('$and', '$or', '$nor')
    .chain((op) => fc.oneof(fc.constant([]), fc.string(), fc.integer(), fc.dictionary(fc.string({ maxLength: 3 }), scalar, { maxKeys: 2 })).map((v) => ({ [op]: v }))),
  fc
    .constantFrom('$in', '$nin', '$all')
    .chain((op) => fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.dictionary(fc.string({ maxLength: 3 }), scalar, { maxKeys: 2 })).map((v) => ({ a: { [op]: v } }))),
  fc.constantFrom('$gt', '$lt', '$gte', '$eq').map((op) => ({ a: { [op]: { $date: 'not-a-date' } } })),
  fc.constant({ a: { $eq: 1, b: 2 } }),
  fc.integer({ min: 33, max: 200 }).map((d) => {
    let f: unknown = { a: 1 }
    for (let i = 0; i < d; i++) f = { $and: [f] }
    return f
  }),
  fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.array(scalar, { minLength: 1, maxLength: 2 })),
)
export const badIds = [
  '%00',
  '%2F..%2F..%2Fetc%2Fpasswd',
  '%FF%FE',
  '%C0%AF',
  '%',
  '%zz',
  '%E2%80%AE',
  '..',
  '%2E%2E',
  '%20%20',
  '%0A%0D',
  encodeURIComponent('\u202e\u0000ü🙂'),
  'a'.repeat(300),
  'b'.repeat(20_000),
  encodeURIComponent('🙂'.repeat(500)),
  '%25%25',
  '~junk~%7B%7D',
]
export const badIdArb = fc.oneof(
  fc.constantFrom(...badIds),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map((s) => encodeURIComponent(`~${s}`)),
)
export const badJson = [
  '{',
  '{"a":}',
  "{'a':1}",
  'nul',
  '[1,]',
  '{}x',
  '\u0000',
  '{"a":1,,}',
  '"unterminated',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '\ufeff{',
  ']',
  '{"a":01}',
  '{"a":NaN}',
  '{"a":undefined}',
]
export const ctypes = [
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'image/png',
  'text/html; charset=utf-8',
]

/** Draws from arbitraries, each draw with the next seed from `seed`. */
export function seededSampler(seed = 1) {
  const sample = <T>(arb: fc.Arbitrary<T>, n: number): T[] => fc.sample(arb, { numRuns: n, seed: seed++ })
  const one = <T>(arb: fc.Arbitrary<T>): T => sample(arb, 1)[0]
  /** Some declared fields with plausible values. */
  const partial = (s: Schema | undefined): Record<string, unknown> => {
    const props = Object.entries(s?.properties ?? {})
    const o: Record<string, unknown> = {}
    for (const [k, ps] of props) if (one(fc.boolean())) o[k] = one(plausible(ps))
    return o
  }
  return { sample, one, partial }
}

export type Sampler = ReturnType<typeof seededSampler>
