import { describe, expect, it } from 'vitest'
import { compileAggregate, type Doc, InMemoryIndex, runAggregate, type AggregateRecord } from '../../sync/query/index.ts'
import { rec } from './helpers.ts'

/** Runs a pipeline and returns its records. */
const agg = (docs: Iterable<object>, pipeline: unknown[], limits: Record<string, number> = {}): AggregateRecord[] => {
  const out = runAggregate(docs, { pipeline, ...limits })
  if (!('records' in out)) throw new Error('expected records')
  return out.records
}

/** Deep-freezes a value, so any mutation by the engine throws (ESM is strict mode). */
function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x)
    Object.freeze(v)
  }
  return v
}

const sales: Doc[] = deepFreeze([
  rec(1, { cat: 'fruit', item: 'apple', qty: 5, price: 1.5, tags: ['red', 'sweet'], at: { $date: '2024-03-01T10:00:00Z' } }),
  rec(2, { cat: 'veg', item: 'carrot', qty: 10, price: 0.5, tags: ['orange'], at: { $date: '2024-01-15T08:00:00Z' } }),
  rec(3, { cat: 'fruit', item: 'banana', qty: 7, price: 0.25, tags: [], at: { $date: '2024-02-10T12:00:00.000Z' } }),
  rec(4, { cat: 'dairy', item: 'milk', qty: 2, price: 1.2, at: { $date: '2023-12-31T23:59:59Z' } }),
  rec(5, { cat: 'veg', item: 'leek', qty: 'n/a', price: 2, tags: ['green', 'long', 'green'] }),
  rec(6, { cat: 'fruit', item: 'cherry', qty: 1, price: 4, tags: ['red'], at: { $date: '2024-03-01T11:00:00+01:00' } }),
  rec(7, { item: 'mystery', qty: 3, price: null }),
])

describe('aggregate: $match', () => {
  it('filters with the query filter grammar', () => {
    const out = agg(sales, [{ $match: { cat: 'fruit', qty: { $gte: 5 } } }])
    expect(out.map((r) => r.item)).toEqual(['apple', 'banana'])
  })

  it('works after $group on computed records', () => {
    const out = agg(sales, [{ $group: { _id: '$cat', n: { $count: {} } } }, { $match: { n: { $gt: 1 } } }])
    expect(out).toEqual([
      { _id: 'fruit', n: 3 },
      { _id: 'veg', n: 2 },
    ])
  })

  it('compares {$date} instants', () => {
    const out = agg(sales, [{ $match: { at: { $gte: { $date: '2024-02-01T00:00:00Z' } } } }])
    expect(out.map((r) => r.item)).toEqual(['apple', 'banana', 'cherry'])
  })

  it('a leading $match uses a QuerySource index and gives the same result as a scan', () => {
    const ix = new InMemoryIndex(['cat'], sales)
    const pipeline = [{ $match: { cat: 'fruit' } }, { $group: { _id: null, qty: { $sum: '$qty' } } }]
    expect(agg(ix, pipeline)).toEqual(agg(sales, pipeline))
    expect(agg(ix, pipeline)).toEqual([{ _id: null, qty: 13 }])
    const inexact = [{ $match: { cat: 'fruit', qty: { $gt: 1 } } }]
    expect(agg(ix, inexact)).toEqual(agg(sales, inexact))
  })

  it('callers with their own index pass candidates through the hook', () => {
    const c = compileAggregate([{ $match: { cat: 'veg' } }, { $count: 'n' }])
    expect(c.leadingMatch?.hints).toEqual([{ path: 'cat', values: ['veg'] }])
    const candidates = sales.filter((d) => d.cat === 'veg')
    expect(c.run([], { candidates: { docs: candidates, exact: true } })).toEqual([{ n: 2 }])
    // Not exact: the filter is re-applied to the candidates.
    expect(c.run([], { candidates: { docs: sales, exact: false } })).toEqual([{ n: 2 }])
  })
})

describe('aggregate: $group', () => {
  it('groups by a path in order of first appearance; missing and null form the null group', () => {
    const out = agg(sales, [{ $group: { _id: '$cat', n: { $sum: 1 } } }])
    expect(out).toEqual([
      { _id: 'fruit', n: 3 },
      { _id: 'veg', n: 2 },
      { _id: 'dairy', n: 1 },
      { _id: null, n: 1 },
    ])
    const withNull = agg([{ id: 'a', k: null }, { id: 'b' }, { id: 'c', k: 'x' }], [{ $group: { _id: '$k', n: { $count: {} } } }])
    expect(withNull).toEqual([
      { _id: null, n: 2 },
      { _id: 'x', n: 1 },
    ])
  })

  it('keys keep their types: 1 and "1" and true are different groups', () => {
    const docs = [{ k: 1 }, { k: '1' }, { k: true }, { k: 1.0 }, { k: -0 }, { k: 0 }]
    expect(agg(docs, [{ $group: { _id: '$k', n: { $count: {} } } }])).toEqual([
      { _id: 1, n: 2 },
      { _id: '1', n: 1 },
      { _id: true, n: 1 },
      { _id: -0, n: 2 },
    ])
  })

  it('a literal or null _id makes one group', () => {
    expect(agg(sales, [{ $group: { _id: null, n: { $count: {} } } }])).toEqual([{ _id: null, n: 7 }])
    expect(agg(sales, [{ $group: { _id: 'all', n: { $sum: 2 } } }])).toEqual([{ _id: 'all', n: 14 }])
    expect(agg([], [{ $group: { _id: null, n: { $count: {} } } }])).toEqual([])
  })

  it('groups by an object of expressions (missing members are null)', () => {
    const docs = [
      { a: 1, b: 'x', v: 1 },
      { a: 1, b: 'y', v: 2 },
      { b: 'x', a: 1, v: 3 },
      { a: 2, v: 4 },
      { a: 2, b: null, v: 5 },
    ]
    expect(agg(docs, [{ $group: { _id: { a: '$a', b: '$b' }, v: { $push: '$v' } } }])).toEqual([
      { _id: { a: 1, b: 'x' }, v: [1, 3] },
      { _id: { a: 1, b: 'y' }, v: [2] },
      { _id: { a: 2, b: null }, v: [4, 5] },
    ])
  })

  it('object and array keys group by deep equality (key order free)', () => {
    const docs = [{ k: { x: 1, y: [1, 2] } }, { k: { y: [1, 2], x: 1 } }, { k: [1, 2] }, { k: { x: 1 } }]
    expect(agg(docs, [{ $group: { _id: '$k', n: { $count: {} } } }]).map((r) => r.n)).toEqual([2, 1, 1])
  })

  it('{$date} keys group by instant; _id is the first value seen', () => {
    const docs = [
      { d: { $date: '2024-01-01T00:00:00Z' } },
      { d: { $date: '2024-01-01T01:00:00+01:00' } },
      { d: { $date: '2024-01-01T00:00:00.000Z' } },
      { d: '2024-01-01T00:00:00Z' },
    ]
    expect(agg(docs, [{ $group: { _id: '$d', n: { $count: {} } } }])).toEqual([
      { _id: { $date: '2024-01-01T00:00:00Z' }, n: 3 },
      { _id: '2024-01-01T00:00:00Z', n: 1 },
    ])
  })

  it('$sum counts with 1, adds numbers, ignores non-numbers; $avg ignores non-numbers, null when none', () => {
    const out = agg(sales, [{ $group: { _id: '$cat', n: { $sum: 1 }, qty: { $sum: '$qty' }, avgQty: { $avg: '$qty' }, avgPrice: { $avg: '$price' }, z: { $sum: 'abc' } } }])
    expect(out).toEqual([
      { _id: 'fruit', n: 3, qty: 13, avgQty: 13 / 3, avgPrice: (1.5 + 0.25 + 4) / 3, z: 0 },
      { _id: 'veg', n: 2, qty: 10, avgQty: 10, avgPrice: 1.25, z: 0 },
      { _id: 'dairy', n: 1, qty: 2, avgQty: 2, avgPrice: 1.2, z: 0 },
      { _id: null, n: 1, qty: 3, avgQty: 3, avgPrice: null, z: 0 },
    ])
  })

  it('$min / $max use the query sort order across types and ignore null and missing', () => {
    const docs = [{ v: 'b' }, { v: 3 }, { v: null }, {}, { v: true }, { v: 'a' }, { v: 10 }]
    expect(agg(docs, [{ $group: { _id: null, lo: { $min: '$v' }, hi: { $max: '$v' } } }])).toEqual([{ _id: null, lo: true, hi: 'b' }])
    const numsFirst = [{ v: 3 }, { v: 'a' }, { v: 1 }, { v: true }, { v: 7 }, { v: { $date: '2024-01-01T00:00:00Z' } }, { v: 9 }]
    expect(agg(numsFirst, [{ $group: { _id: null, lo: { $min: '$v' }, hi: { $max: '$v' } } }])).toEqual([{ _id: null, lo: true, hi: { $date: '2024-01-01T00:00:00Z' } }])
    const nums = [{ v: 3 }, { v: -1 }, { v: 2.5 }]
    expect(agg(nums, [{ $group: { _id: null, lo: { $min: '$v' }, hi: { $max: '$v' } } }])).toEqual([{ _id: null, lo: -1, hi: 3 }])
    expect(agg([{ v: null }, {}], [{ $group: { _id: null, lo: { $min: '$v' }, hi: { $max: '$v' } } }])).toEqual([{ _id: null, lo: null, hi: null }])
    // Instants sort after strings; objects/arrays after instants.
    const mixed = [{ v: 'zzz' }, { v: { $date: '2020-01-01T00:00:00Z' } }, { v: [1] }, { v: 5 }]
    expect(agg(mixed, [{ $group: { _id: null, lo: { $min: '$v' }, hi: { $max: '$v' } } }])).toEqual([{ _id: null, lo: 5, hi: [1] }])
  })

  it('$min / $max compare {$date} by instant and return the stored wrapper', () => {
    const out = agg(sales, [{ $group: { _id: '$cat', first: { $min: '$at' }, last: { $max: '$at' } } }])
    expect(out[0]).toEqual({ _id: 'fruit', first: { $date: '2024-02-10T12:00:00.000Z' }, last: { $date: '2024-03-01T10:00:00Z' } })
    // 11:00+01:00 is 10:00Z: equal instants keep the first value seen.
    const tie = agg(
      [{ at: { $date: '2024-03-01T11:00:00+01:00' } }, { at: { $date: '2024-03-01T10:00:00Z' } }],
      [{ $group: { _id: null, lo: { $min: '$at' }, hi: { $max: '$at' } } }],
    )
    expect(tie).toEqual([{ _id: null, lo: { $date: '2024-03-01T11:00:00+01:00' }, hi: { $date: '2024-03-01T11:00:00+01:00' } }])
    const out2 = agg(sales, [{ $group: { _id: null, lo: { $min: '$at' }, hi: { $max: '$at' } } }])
    expect(out2).toEqual([{ _id: null, lo: { $date: '2023-12-31T23:59:59Z' }, hi: { $date: '2024-03-01T10:00:00Z' } }])
  })

  it('$count, $push (skips missing, keeps null), $addToSet (deep, first appearance), $first, $last', () => {
    const docs = [
      { g: 1, v: 'a', o: { x: 1, y: 2 } },
      { g: 1, v: null, o: { y: 2, x: 1 } },
      { g: 1, o: [1] },
      { g: 1, v: 'a', o: { $date: '2024-01-01T00:00:00Z' } },
      { g: 1, v: 'b', o: { $date: '2024-01-01T00:00:00.000Z' } },
    ]
    const out = agg(docs, [
      {
        $group: {
          _id: '$g',
          n: { $count: {} },
          vs: { $push: '$v' },
          set: { $addToSet: '$v' },
          objs: { $addToSet: '$o' },
          first: { $first: '$v' },
          last: { $last: '$v' },
          firstMissing: { $first: '$nope' },
          lastObj: { $last: '$o' },
        },
      },
    ])
    expect(out).toEqual([
      {
        _id: 1,
        n: 5,
        vs: ['a', null, 'a', 'b'],
        set: ['a', null, 'b'],
        objs: [{ x: 1, y: 2 }, [1], { $date: '2024-01-01T00:00:00Z' }],
        first: 'a',
        last: 'b',
        firstMissing: null,
        lastObj: { $date: '2024-01-01T00:00:00.000Z' },
      },
    ])
    // $last of a missing value is null; $push of nothing is [].
    expect(agg([{ g: 1, v: 1 }, { g: 1 }], [{ $group: { _id: '$g', last: { $last: '$v' }, p: { $push: '$zz' } } }])).toEqual([{ _id: 1, last: null, p: [] }])
  })

  it('$push: "$$ROOT" collects whole records; object expressions build values', () => {
    const out = agg(sales.slice(0, 2), [{ $group: { _id: null, docs: { $push: '$$ROOT' }, pairs: { $push: { item: '$item', n: '$qty', k: { $literal: '$x' } } } } }])
    expect(out[0].docs).toEqual(sales.slice(0, 2))
    expect(out[0].pairs).toEqual([
      { item: 'apple', n: 5, k: '$x' },
      { item: 'carrot', n: 10, k: '$x' },
    ])
  })

  it('many accumulators, many distinct arguments and wide composite keys', () => {
    const docs = Array.from({ length: 30 }, (_, i) => ({
      a: i % 2,
      b: i % 3,
      c: i % 5,
      d: 'x',
      e: { f: i },
      v0: i,
      v1: i * 2,
      v2: i * 3,
      v3: i * 4,
      v4: i * 5,
      v5: i * 6,
      v6: i * 7,
      v7: i * 8,
      v8: i * 9,
      v9: i * 10,
    }))
    const acc: Record<string, unknown> = {}
    for (let j = 0; j < 10; j++) acc['s' + j] = { $sum: '$v' + j }
    acc.maxF = { $max: '$e.f' }
    acc.n = { $count: {} }
    const out = agg(docs, [{ $group: { _id: { a: '$a', b: '$b', c: '$c', d: '$d' }, ...acc } }])
    expect(out).toHaveLength(30)
    const all = agg(docs, [{ $group: { _id: null, ...acc } }])
    const expected: Record<string, unknown> = { _id: null }
    for (let j = 0; j < 10; j++) expected['s' + j] = (j + 1) * 435
    expected.maxF = 29
    expected.n = 30
    expect(all).toEqual([expected])
    const two = agg(docs, [{ $group: { _id: { a: '$a', b: '$b' }, n: { $count: {} } } }])
    expect(two.map((r) => r.n)).toEqual([5, 5, 5, 5, 5, 5])
  })

  it('paths named like Object.prototype members read own properties only; numeric segments index arrays', () => {
    const docs: Record<string, unknown>[] = [{ constructor: 'x' }, {}, { toString: 1 }]
    expect(agg(docs, [{ $group: { _id: '$constructor', n: { $count: {} } } }])).toEqual([
      { _id: 'x', n: 1 },
      { _id: null, n: 2 },
    ])
    expect(agg(sales, [{ $group: { _id: '$tags.0', n: { $count: {} } } }]).map((r) => r._id)).toEqual(['red', 'orange', null, 'green'])
  })

  it('group output is deterministic: same input order, same output', () => {
    const pipeline = [{ $unwind: '$tags' }, { $group: { _id: '$tags', items: { $addToSet: '$item' } } }]
    const a = agg(sales, pipeline)
    expect(agg(sales, pipeline)).toEqual(a)
    expect(a.map((r) => r._id)).toEqual(['red', 'sweet', 'orange', 'green', 'long'])
  })
})

describe('aggregate: $sort, $limit, $skip', () => {
  it('sorts with {path: 1|-1} or the query array form', () => {
    const a = agg(sales, [{ $sort: { qty: -1 } }, { $project: { item: 1, _id: 0, id: 0 } }])
    expect(a.map((r) => r.item)).toEqual(['leek', 'carrot', 'banana', 'apple', 'mystery', 'milk', 'cherry'])
    const b = agg(sales, [{ $sort: ['-qty'] }])
    expect(b.map((r) => r.item)).toEqual(a.map((r) => r.item))
    const c = agg(sales, [{ $sort: { cat: 1, price: -1 } }])
    expect(c.map((r) => r.item)).toEqual(['mystery', 'milk', 'cherry', 'apple', 'banana', 'leek', 'carrot'])
  })

  it('uses the query total order: null/missing < bool < number < string < {$date} < others', () => {
    const docs = [
      { v: 'b' },
      { v: { $date: '2024-01-01T00:00:00Z' } },
      { v: 10 },
      { v: true },
      { v: null },
      { v: [1] },
      { v: 'a' },
      {},
      { v: { $date: '2023-06-01T00:00:00+02:00' } },
    ]
    const out = agg(docs, [{ $sort: { v: 1 } }]).map((d) => d.v)
    expect(out).toEqual([null, undefined, true, 10, 'a', 'b', { $date: '2023-06-01T00:00:00+02:00' }, { $date: '2024-01-01T00:00:00Z' }, [1]])
  })

  it('sorts {$date} by instant, not by text', () => {
    const out = agg(sales, [{ $match: { at: { $exists: true } } }, { $sort: { at: -1 } }])
    // cherry 11:00+01:00 == apple 10:00Z: tie broken by _ver.id (apple first).
    expect(out.map((r) => r.item)).toEqual(['apple', 'cherry', 'banana', 'carrot', 'milk'])
  })

  it('is stable on records without ids (group outputs keep their order on ties)', () => {
    const out = agg(sales, [{ $group: { _id: '$cat', n: { $count: {} } } }, { $sort: { n: 1 } }])
    expect(out).toEqual([
      { _id: 'dairy', n: 1 },
      { _id: null, n: 1 },
      { _id: 'veg', n: 2 },
      { _id: 'fruit', n: 3 },
    ])
  })

  it('sorts group outputs by _id paths', () => {
    const out = agg(sales, [{ $group: { _id: { c: '$cat' }, q: { $sum: '$qty' } } }, { $sort: { '_id.c': -1 } }])
    expect(out.map((r) => (r._id as { c: unknown }).c)).toEqual(['veg', 'fruit', 'dairy', null])
  })

  it('$skip and $limit page; $sort + $limit keeps a bounded heap with the same result', () => {
    const all = agg(sales, [{ $sort: { price: 1 } }])
    expect(agg(sales, [{ $sort: { price: 1 } }, { $skip: 2 }, { $limit: 3 }])).toEqual(all.slice(2, 5))
    expect(agg(sales, [{ $sort: { price: 1 } }, { $limit: 2 }])).toEqual(all.slice(0, 2))
    expect(agg(sales, [{ $skip: 5 }])).toEqual(sales.slice(5))
    expect(agg(sales, [{ $limit: 0 }])).toEqual([])
    expect(agg(sales, [{ $skip: 100 }])).toEqual([])
    const plan = compileAggregate([{ $sort: { price: 1 } }, { $skip: 2 }, { $limit: 3 }, { $limit: 10 }]).explain()
    expect(plan.stages[0]).toMatchObject({ op: '$sort', topK: 5 })
  })

  it('$limit stops pulling from the source', () => {
    let pulled = 0
    function* source() {
      for (let i = 0; i < 1000; i++) {
        pulled++
        yield { i }
      }
    }
    expect(agg(source(), [{ $match: { i: { $gte: 10 } } }, { $limit: 3 }])).toEqual([{ i: 10 }, { i: 11 }, { i: 12 }])
    expect(pulled).toBe(13)
  })
})

describe('aggregate: $project', () => {
  it('inclusion keeps id and _id unless set to 0', () => {
    expect(agg(sales.slice(0, 1), [{ $project: { item: 1, qty: 1 } }])).toEqual([{ id: 'r001', item: 'apple', qty: 5 }])
    expect(agg(sales.slice(0, 1), [{ $project: { item: 1, id: 0 } }])).toEqual([{ item: 'apple' }])
    const grouped = agg(sales, [{ $group: { _id: '$cat', n: { $count: {} } } }, { $limit: 1 }])
    expect(agg(grouped, [{ $project: { n: 1 } }])).toEqual([{ _id: 'fruit', n: 3 }])
    expect(agg(grouped, [{ $project: { n: 1, _id: 0 } }])).toEqual([{ n: 3 }])
    expect(agg(grouped, [{ $project: { _id: 1 } }])).toEqual([{ _id: 'fruit' }])
  })

  it('exclusion drops paths (dotted paths too)', () => {
    expect(agg([{ id: 'a', x: 1, y: { z: 2, w: 3 } }], [{ $project: { x: 0, 'y.z': 0 } }])).toEqual([{ id: 'a', y: { w: 3 } }])
    expect(agg([{ id: 'a', _id: 5, x: 1 }], [{ $project: { _id: 0 } }])).toEqual([{ id: 'a', x: 1 }])
    expect(agg([{ id: 'a', x: 1 }], [{ $project: { id: 0 } }])).toEqual([{ x: 1 }])
  })

  it('computed fields from $path references, literals and object expressions', () => {
    const out = agg(sales.slice(0, 2), [
      {
        $project: {
          id: 0,
          name: '$item',
          when: '$at',
          'meta.cat': '$cat',
          'meta.first': '$tags.0',
          pair: ['$qty', '$price'],
          fixed: { $literal: '$not-a-path' },
          label: 'const',
          nothing: '$missing',
        },
      },
    ])
    expect(out).toEqual([
      { name: 'apple', when: { $date: '2024-03-01T10:00:00Z' }, meta: { cat: 'fruit', first: 'red' }, pair: [5, 1.5], fixed: '$not-a-path', label: 'const' },
      { name: 'carrot', when: { $date: '2024-01-15T08:00:00Z' }, meta: { cat: 'veg', first: 'orange' }, pair: [10, 0.5], fixed: '$not-a-path', label: 'const' },
    ])
  })

  it('computed fields beside inclusions; the input is never mutated', () => {
    const docs = deepFreeze([{ id: 'a', x: { p: 1, q: 2 }, y: 3 }])
    expect(agg(docs, [{ $project: { 'x.p': 1, 'x.r': '$y', z: '$$ROOT.y' } }])).toEqual([{ id: 'a', x: { p: 1, r: 3 }, z: 3 }])
  })
})

describe('aggregate: $unwind', () => {
  const docs = deepFreeze([{ id: 'a', t: ['x', 'y'] }, { id: 'b', t: [] }, { id: 'c', t: null }, { id: 'd' }, { id: 'e', t: 'solo' }, { id: 'f', n: { t: [1, 2] } }])

  it('emits one record per element; drops null, missing and empty arrays', () => {
    expect(agg(docs, [{ $unwind: '$t' }])).toEqual([
      { id: 'a', t: 'x' },
      { id: 'a', t: 'y' },
      { id: 'e', t: 'solo' },
    ])
  })

  it('preserveNullAndEmptyArrays keeps them (an empty array field is removed) and includeArrayIndex numbers', () => {
    expect(agg(docs.slice(0, 5), [{ $unwind: { path: '$t', preserveNullAndEmptyArrays: true, includeArrayIndex: 'i' } }])).toEqual([
      { id: 'a', t: 'x', i: 0 },
      { id: 'a', t: 'y', i: 1 },
      { id: 'b', i: null },
      { id: 'c', t: null, i: null },
      { id: 'd', i: null },
      { id: 'e', t: 'solo', i: 0 },
    ])
  })

  it('unwinds nested paths', () => {
    expect(agg(docs, [{ $unwind: { path: '$n.t' } }])).toEqual([
      { id: 'f', n: { t: 1 } },
      { id: 'f', n: { t: 2 } },
    ])
  })

  it('unwind then group counts tags', () => {
    const out = agg(sales, [{ $unwind: '$tags' }, { $group: { _id: '$tags', n: { $sum: 1 } } }, { $sort: { n: -1, _id: 1 } }])
    expect(out).toEqual([
      { _id: 'green', n: 2 },
      { _id: 'red', n: 2 },
      { _id: 'long', n: 1 },
      { _id: 'orange', n: 1 },
      { _id: 'sweet', n: 1 },
    ])
  })
})

describe('aggregate: $count stage and pipelines', () => {
  it('$count emits one record, also for no input', () => {
    expect(agg(sales, [{ $match: { cat: 'fruit' } }, { $count: 'fruits' }])).toEqual([{ fruits: 3 }])
    expect(agg(sales, [{ $match: { cat: 'none' } }, { $count: 'n' }])).toEqual([{ n: 0 }])
  })

  it('an empty pipeline returns the input records', () => {
    expect(agg(sales, [])).toEqual(sales)
  })

  it('a compiled pipeline runs many times with fresh state', () => {
    const c = compileAggregate([{ $group: { _id: '$cat', n: { $sum: 1 } } }, { $sort: { n: -1 } }, { $limit: 1 }])
    expect(c.run(sales)).toEqual([{ _id: 'fruit', n: 3 }])
    expect(c.run(sales)).toEqual([{ _id: 'fruit', n: 3 }])
    expect(runAggregate(sales, c)).toEqual({ records: [{ _id: 'fruit', n: 3 }] })
  })

  it('matches a hand-written loop on a larger random input', () => {
    const docs: Doc[] = []
    let seed = 7
    const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32
    for (let i = 0; i < 5000; i++) docs.push(rec(i, { cat: 'c' + Math.floor(rnd() * 20), amount: Math.round(rnd() * 1000) / 10, ...(i % 17 === 0 ? { amount: 'x' } : {}) }))
    const expected = new Map<string, { n: number; total: number; count: number; max: number | string }>()
    for (const d of docs) {
      const g = expected.get(d.cat as string) ?? { n: 0, total: 0, count: 0, max: -Infinity }
      expected.set(d.cat as string, g)
      g.n++
      if (typeof d.amount === 'number') {
        g.total += d.amount
        g.count++
        if (typeof g.max === 'number') g.max = Math.max(g.max, d.amount)
      } else g.max = d.amount as string // strings sort after numbers
    }
    const out = agg(docs, [{ $group: { _id: '$cat', n: { $sum: 1 }, total: { $sum: '$amount' }, avg: { $avg: '$amount' }, max: { $max: '$amount' } } }])
    expect(out).toEqual([...expected].map(([k, g]) => ({ _id: k, n: g.n, total: g.total, avg: g.total / g.count, max: g.max })))
  })
})
