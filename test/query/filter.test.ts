import { describe, expect, it } from 'vitest'
import { compileFilter, FILTER_LIMITS, type Doc } from '../../sync/query/index.ts'
import { expectSvcError } from './helpers.ts'

const docs: Doc[] = [
  {
    id: 'a',
    n: 1,
    s: 'apple',
    tags: ['red', 'fruit'],
    core: { name: 'Alpha Café', types: ['t1'] },
    at: { $date: '2024-01-01T00:00:00Z' },
    nested: { x: { y: 1 } },
    items: [{ k: 1, v: 'one' }, { k: 2 }],
    flag: true,
    nul: null,
  },
  {
    id: 'b',
    n: 2,
    s: 'banana',
    tags: ['yellow', 'fruit'],
    core: { name: 'Beta', types: ['t1', 't2'] },
    at: { $date: '2024-06-01T12:00:00.000Z' },
    nested: { x: { y: 2 } },
    items: [{ k: 3, v: 'three' }],
    flag: false,
  },
  { id: 'c', n: 3, s: 'cherry', tags: [], core: { name: 'Gamma', types: ['t2'] }, at: '2024-01-01T00:00:00Z', matrix: [[1, 2], [3]] },
  { id: 'd', n: '4', s: 'date', core: { name: 'delta words here', types: [] }, arr: [1, 2, 3], obj: { p: 1, q: [1, { r: 2 }] } },
  { id: 'e', core: { name: 'Epsilon', description: 'the quick brown fox' }, _ver: { id: 'secret-token' }, big: 1e21 },
]

/** Ids of docs matching the filter. */
const match = (filter: unknown) => docs.filter(compileFilter(filter).test).map((d) => d.id)

describe('filter: equality and comparison', () => {
  it('implicit $eq and $eq on scalars, no coercion', () => {
    expect(match({ n: 1 })).toEqual(['a'])
    expect(match({ n: { $eq: 2 } })).toEqual(['b'])
    expect(match({ n: 4 })).toEqual([])
    expect(match({ n: '4' })).toEqual(['d'])
    expect(match({ flag: false })).toEqual(['b'])
    expect(match({ big: 1e21 })).toEqual(['e'])
  })

  it('dotted paths into nested objects', () => {
    expect(match({ 'nested.x.y': 2 })).toEqual(['b'])
    expect(match({ 'core.name': 'Gamma' })).toEqual(['c'])
    expect(match({ 'nested.x': { y: 1 } })).toEqual(['a'])
  })

  it('deep equality of objects ignores key order but not extra keys', () => {
    expect(match({ obj: { q: [1, { r: 2 }], p: 1 } })).toEqual(['d'])
    expect(match({ obj: { p: 1 } })).toEqual([])
    expect(match({ 'nested.x': { y: 1, z: 1 } })).toEqual([])
  })

  it('null matches null and missing', () => {
    expect(match({ nul: null })).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(match({ flag: null })).toEqual(['c', 'd', 'e'])
    expect(match({ flag: { $ne: null } })).toEqual(['a', 'b'])
  })

  it('$ne matches missing fields and other types', () => {
    expect(match({ n: { $ne: 1 } })).toEqual(['b', 'c', 'd', 'e'])
  })

  it('$gt/$gte/$lt/$lte compare within one type only', () => {
    expect(match({ n: { $gt: 1 } })).toEqual(['b', 'c'])
    expect(match({ n: { $gte: 1, $lt: 3 } })).toEqual(['a', 'b'])
    expect(match({ n: { $lte: 3 } })).toEqual(['a', 'b', 'c'])
    expect(match({ n: { $gt: '0' } })).toEqual(['d'])
    expect(match({ s: { $gte: 'banana', $lt: 'date' } })).toEqual(['b', 'c'])
    expect(match({ flag: { $gt: false } })).toEqual(['a'])
  })

  it('$in and $nin', () => {
    expect(match({ n: { $in: [1, 3, '4'] } })).toEqual(['a', 'c', 'd'])
    expect(match({ n: { $in: [] } })).toEqual([])
    expect(match({ n: { $nin: [1, 3] } })).toEqual(['b', 'd', 'e'])
    expect(match({ flag: { $in: [null] } })).toEqual(['c', 'd', 'e'])
    expect(match({ 'nested.x': { $in: [{ y: 2 }] } })).toEqual(['b'])
  })

  it('$exists', () => {
    expect(match({ flag: { $exists: true } })).toEqual(['a', 'b'])
    expect(match({ flag: { $exists: false } })).toEqual(['c', 'd', 'e'])
    expect(match({ nul: { $exists: true } })).toEqual(['a'])
    expect(match({ 'items.v': { $exists: true } })).toEqual(['a', 'b'])
    expect(match({ 'items.v': { $exists: false } })).toEqual(['c', 'd', 'e'])
  })

  it('$not, $size, $all, $elemMatch', () => {
    expect(match({ n: { $not: { $gt: 1 } } })).toEqual(['a', 'd', 'e'])
    expect(match({ tags: { $size: 2 } })).toEqual(['a', 'b'])
    expect(match({ tags: { $size: 0 } })).toEqual(['c'])
    expect(match({ tags: { $all: ['fruit', 'red'] } })).toEqual(['a'])
    expect(match({ tags: { $all: [] } })).toEqual([])
    expect(match({ items: { $elemMatch: { k: { $gte: 2 }, v: { $exists: true } } } })).toEqual(['b'])
    expect(match({ arr: { $elemMatch: { $gt: 2, $lt: 4 } } })).toEqual(['d'])
  })
})

describe('filter: arrays match any element', () => {
  it('scalar against an array field matches any element', () => {
    expect(match({ tags: 'fruit' })).toEqual(['a', 'b'])
    expect(match({ 'core.types': 't2' })).toEqual(['b', 'c'])
    expect(match({ arr: { $gt: 2 } })).toEqual(['d'])
    expect(match({ tags: { $in: ['red', 'yellow'] } })).toEqual(['a', 'b'])
    expect(match({ tags: { $nin: ['red'] } })).toEqual(['b', 'c', 'd', 'e'])
    expect(match({ tags: { $ne: 'fruit' } })).toEqual(['c', 'd', 'e'])
  })

  it('$eq against a whole array (deep, ordered)', () => {
    expect(match({ tags: ['red', 'fruit'] })).toEqual(['a'])
    expect(match({ tags: ['fruit', 'red'] })).toEqual([])
    expect(match({ tags: [] })).toEqual(['c'])
    expect(match({ matrix: [3] })).toEqual(['c'])
  })

  it('paths fan out over arrays of objects', () => {
    expect(match({ 'items.k': 2 })).toEqual(['a'])
    expect(match({ 'items.k': { $gt: 2 } })).toEqual(['b'])
    expect(match({ 'items.v': 'three' })).toEqual(['b'])
    expect(match({ 'obj.q.r': 2 })).toEqual(['d'])
  })

  it('numeric segments index arrays', () => {
    expect(match({ 'tags.0': 'red' })).toEqual(['a'])
    expect(match({ 'items.1.k': 2 })).toEqual(['a'])
  })
})

describe('filter: instants', () => {
  it('{$date} compares instants, whatever the text form', () => {
    expect(match({ at: { $date: '2024-01-01T00:00:00.000Z' } })).toEqual(['a'])
    expect(match({ at: { $eq: { $date: '2024-01-01T01:00:00+01:00' } } })).toEqual(['a'])
    expect(match({ at: { $gt: { $date: '2024-03-01T00:00:00Z' } } })).toEqual(['b'])
    expect(match({ at: { $lte: { $date: '2024-06-01T12:00:00Z' } } })).toEqual(['a', 'b'])
    expect(match({ at: { $in: [{ $date: '2024-06-01T12:00:00Z' }] } })).toEqual(['b'])
  })

  it('a bare string never matches a stored {$date} and raises no error', () => {
    expect(match({ at: '2024-01-01T00:00:00Z' })).toEqual(['c']) // only the doc that stores a bare string
    expect(match({ at: { $gte: '2000' } })).toEqual(['c'])
    expect(match({ at: { $lt: 'zzzz' } })).toEqual(['c'])
  })

  it('a {$date} never matches a stored bare string', () => {
    expect(match({ at: { $date: '2024-01-01T00:00:00Z' } })).not.toContain('c')
  })

  it('a malformed {$date} in a filter is filter.invalid', () => {
    expectSvcError(() => compileFilter({ at: { $date: 'yesterday' } }), 'filter.invalid', { path: 'at' })
    expectSvcError(() => compileFilter({ at: { $gt: { $date: '2024-02-30T00:00:00Z' } } }), 'filter.invalid')
    expectSvcError(() => compileFilter({ at: { $date: 5 } }), 'filter.invalid')
  })
})

describe('filter: logical operators', () => {
  it('$and, $or, $nor and nesting', () => {
    expect(match({ $and: [{ tags: 'fruit' }, { n: { $gt: 1 } }] })).toEqual(['b'])
    expect(match({ $or: [{ n: 1 }, { s: 'cherry' }] })).toEqual(['a', 'c'])
    expect(match({ $nor: [{ n: 1 }, { s: 'cherry' }] })).toEqual(['b', 'd', 'e'])
    expect(match({ $or: [{ $and: [{ n: { $gte: 2 } }, { n: { $lte: 3 } }] }, { $and: [{ n: '4' }, { $or: [{ s: 'date' }, { s: 'x' }] }] }] })).toEqual(['b', 'c', 'd'])
    expect(match({ tags: 'fruit', $or: [{ n: 1 }, { n: 3 }] })).toEqual(['a'])
  })

  it('the empty filter matches everything', () => {
    expect(match({})).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(match(undefined)).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(compileFilter({}).matchesAll).toBe(true)
  })
})

describe('filter: $text', () => {
  it('top level: every term in some string leaf, case- and diacritic-insensitive', () => {
    expect(match({ $text: { $search: 'alpha' } })).toEqual(['a'])
    expect(match({ $text: { $search: 'ALPHA cafe' } })).toEqual(['a'])
    expect(match({ $text: { $search: 'quick fox' } })).toEqual(['e'])
    expect(match({ $text: { $search: 'quick cat' } })).toEqual([])
    expect(match({ $text: { $search: 'an' } })).toEqual(['b'])
    expect(match({ $text: 'fruit yellow' })).toEqual(['b'])
  })

  it('quoted phrases are one term', () => {
    expect(match({ $text: { $search: '"brown fox"' } })).toEqual(['e'])
    expect(match({ $text: { $search: '"fox brown"' } })).toEqual([])
  })

  it('skips id, _-prefixed top-level keys, object keys and $date text', () => {
    expect(match({ $text: { $search: 'secret' } })).toEqual([])
    expect(match({ $text: { $search: 'nested' } })).toEqual([])
    expect(match({ $text: { $search: '2024' } })).toEqual(['c']) // c stores a bare string
    expect(match({ $text: { $search: 'r00' } })).toEqual([])
  })

  it('field level searches the leaves under the path', () => {
    expect(match({ 'core.name': { $text: 'words HERE' } })).toEqual(['d'])
    expect(match({ core: { $text: { $search: 'brown' } } })).toEqual(['e'])
    expect(match({ 'items.v': { $text: 'thr' } })).toEqual(['b'])
    expect(match({ s: { $text: 'fox' } })).toEqual([])
  })

  it('an empty search matches everything; a bad one is filter.invalid', () => {
    expect(match({ $text: { $search: '  ' } })).toHaveLength(5)
    expectSvcError(() => compileFilter({ $text: { $search: 1 } }), 'filter.invalid')
    expectSvcError(() => compileFilter({ $text: { $search: 'a', $language: 'en' } }), 'filter.invalid')
  })
})

describe('filter: errors', () => {
  it('unknown operators name the operator and the path', () => {
    expectSvcError(() => compileFilter({ n: { $regex: 'a' } }), 'filter.unknown_operator', { operator: '$regex', path: 'n' })
    expectSvcError(() => compileFilter({ 'core.name': { $eq: 1, $foo: 2 } }), 'filter.unknown_operator', { operator: '$foo', path: 'core.name' })
    expectSvcError(() => compileFilter({ $where: 'x' }), 'filter.unknown_operator', { operator: '$where', path: '' })
    expectSvcError(() => compileFilter({ $or: [{ a: { $not: { $bogus: 1 } } }] }), 'filter.unknown_operator', { operator: '$bogus', path: 'a' })
  })

  it('structurally bad filters are filter.invalid', () => {
    const bad: unknown[] = [
      'x',
      [],
      42,
      { n: { $in: 1 } },
      { n: { $nin: 'a' } },
      { n: { $all: {} } },
      { $and: {} },
      { $and: [] },
      { $or: [1] },
      { $nor: 'x' },
      { n: { $exists: 1 } },
      { n: { $size: -1 } },
      { n: { $size: 1.5 } },
      { n: { $gt: 1, plain: 2 } },
      { n: { $gt: [1] } },
      { n: { $gt: null } },
      { n: { $not: 5 } },
      { n: { $elemMatch: 5 } },
      { 'a..b': 1 },
      { '': 1 },
      { 'a.$b': 1 },
      { n: { $eq: { $gt: 1 } } },
      { n: { $in: [{ $gt: 1 }] } },
      { n: { $date: '2024-01-01', $gt: 1 } },
      { n: Infinity },
      { n: () => 1 },
    ]
    for (const f of bad) expectSvcError(() => compileFilter(f), 'filter.invalid')
  })

  it('guards depth and size', () => {
    let deep: Record<string, unknown> = { n: 1 }
    for (let i = 0; i < FILTER_LIMITS.maxDepth; i++) deep = { $and: [deep] }
    expectSvcError(() => compileFilter(deep), 'filter.invalid', { limit: 'depth' })
    let deepValue: unknown = 1
    for (let i = 0; i < 40; i++) deepValue = { v: deepValue }
    expectSvcError(() => compileFilter({ n: deepValue }), 'filter.invalid', { limit: 'depth' })
    const huge = { n: { $in: Array.from({ length: FILTER_LIMITS.maxNodes + 1 }, (_, i) => i) } }
    expectSvcError(() => compileFilter(huge), 'filter.invalid', { limit: 'size' })
    let ok: Record<string, unknown> = { n: 1 }
    for (let i = 0; i < 10; i++) ok = { $and: [ok] }
    expect(docs.filter(compileFilter(ok).test).map((d) => d.id)).toEqual(['a'])
  })
})

describe('filter: equality hints for indexes', () => {
  it('extracts conjunctive scalar equalities only', () => {
    expect(compileFilter({ 'core.types': 't1', n: { $gt: 1 } }).hints).toEqual([{ path: 'core.types', values: ['t1'] }])
    expect(compileFilter({ $and: [{ a: { $in: ['x', 'y'] } }, { b: { $eq: 2 } }] }).hints).toEqual([
      { path: 'a', values: ['x', 'y'] },
      { path: 'b', values: [2] },
    ])
    expect(compileFilter({ $or: [{ a: 1 }, { a: 2 }] }).hints).toEqual([])
    expect(compileFilter({ a: { $not: { $eq: 1 } } }).hints).toEqual([])
    expect(compileFilter({ a: null, b: { x: 1 }, c: ['x'] }).hints).toEqual([])
    expect(compileFilter({ tags: { $all: ['p', 'q'] } }).hints).toEqual([
      { path: 'tags', values: ['p'] },
      { path: 'tags', values: ['q'] },
    ])
  })
})
