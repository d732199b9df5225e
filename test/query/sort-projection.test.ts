import { describe, expect, it } from 'vitest'
import { compareValues, compileProjection, compileSort, runQuery, type Doc } from '../../sync/query/index.ts'
import { expectSvcError, ids, rec } from './helpers.ts'

describe('sort', () => {
  const mixed: Doc[] = [
    rec(1, { v: 'b' }),
    rec(2, { v: { $date: '2024-01-01T00:00:00Z' } }),
    rec(3, { v: 10 }),
    rec(4, { v: true }),
    rec(5, { v: null }),
    rec(6, { v: [1] }),
    rec(7, { v: 'a' }),
    rec(8),
    rec(9, { v: 2 }),
    rec(10, { v: false }),
    rec(11, { v: { $date: '2023-01-01T00:00:00Z' } }),
    rec(12, { v: { k: 1 } }),
    rec(13, { v: 'B' }),
  ]

  it('total order across types: missing/null < booleans < numbers < strings < instants < others', () => {
    const asc = runQuery(mixed, { sort: ['v'] }).records.map((d) => d.v)
    expect(asc).toEqual([null, undefined, false, true, 2, 10, 'B', 'a', 'b', { $date: '2023-01-01T00:00:00Z' }, { $date: '2024-01-01T00:00:00Z' }, [1], { k: 1 }])
  })

  it('descending reverses the whole order (missing last), ties stay ascending by _ver.id', () => {
    const desc = runQuery(mixed, { sort: ['-v'] }).records
    expect(desc.map((d) => d.v)).toEqual([{ k: 1 }, [1], { $date: '2024-01-01T00:00:00Z' }, { $date: '2023-01-01T00:00:00Z' }, 'b', 'a', 'B', 10, 2, true, false, null, undefined])
    expect(ids(desc.slice(-2))).toEqual(['r005', 'r008'])
  })

  it('ties are broken by _ver.id then id, whatever the input order', () => {
    const docs: Doc[] = [
      { id: 'z', _ver: { id: '2' }, g: 1 },
      { id: 'y', _ver: { id: '1' }, g: 1 },
      { id: 'b', _ver: { id: '3' }, g: 0 },
      { id: 'a', _ver: { id: '3' }, g: 1 },
      { id: 'c', g: 1 },
    ]
    const expected = ['b', 'c', 'y', 'z', 'a']
    expect(ids(runQuery(docs, { sort: ['g'] }).records)).toEqual(expected)
    expect(ids(runQuery([...docs].reverse(), { sort: ['g'] }).records)).toEqual(expected)
    expect(ids(runQuery(docs, { sort: ['-g'] }).records)).toEqual(['c', 'y', 'z', 'a', 'b'])
  })

  it('no sort means _ver.id order; several keys apply in turn', () => {
    const docs = [rec(3, { a: 1, b: 2 }), rec(1, { a: 2, b: 1 }), rec(2, { a: 1, b: 1 })]
    expect(ids(runQuery(docs, {}).records)).toEqual(['r001', 'r002', 'r003'])
    expect(ids(runQuery(docs, { sort: ['a', '-b'] }).records)).toEqual(['r003', 'r002', 'r001'])
    expect(ids(runQuery(docs, { sort: ['-a', 'b'] }).records)).toEqual(['r001', 'r002', 'r003'])
  })

  it('instants sort by instant, not by text', () => {
    const docs = [rec(1, { t: { $date: '2024-01-01T10:00:00+05:00' } }), rec(2, { t: { $date: '2024-01-01T06:00:00Z' } })]
    expect(ids(runQuery(docs, { sort: ['t'] }).records)).toEqual(['r001', 'r002'])
  })

  it('dotted paths and numeric segments', () => {
    const docs = [rec(1, { c: { n: 'b' }, l: [3] }), rec(2, { c: { n: 'a' }, l: [1] }), rec(3, { c: {}, l: [2] })]
    expect(ids(runQuery(docs, { sort: ['c.n'] }).records)).toEqual(['r003', 'r002', 'r001'])
    expect(ids(runQuery(docs, { sort: ['l.0'] }).records)).toEqual(['r002', 'r003', 'r001'])
  })

  it('compareValues is a total order', () => {
    expect(compareValues(undefined, null)).toBe(0)
    expect(compareValues(true, 0)).toBeLessThan(0)
    expect(compareValues(1e9, '0')).toBeLessThan(0)
    expect(compareValues('z', { $date: '1970-01-01T00:00:00Z' })).toBeLessThan(0)
    expect(compareValues({ $date: '2024-01-01T00:00:00Z' }, { $date: '2024-01-01T00:00:00.000Z' })).toBe(0)
  })

  it('bad sort specs are request.invalid_field', () => {
    for (const s of ['a', [1], ['a..b'], [''], ['-'], ['$x'], Array(9).fill('a'), { a: 1 }]) {
      expectSvcError(() => compileSort(s), 'request.invalid_field', { field: 'sort' })
    }
  })
})

describe('projection', () => {
  const doc: Doc = { id: 'x', _ver: { id: '1' }, a: 1, b: { c: 2, d: 3 }, e: [{ f: 1, g: 2 }, { f: 3 }, 7], h: 'h' }

  it('inclusion keeps only the paths and id', () => {
    expect(compileProjection({ a: 1, 'b.c': 1 }).apply(doc)).toEqual({ id: 'x', a: 1, b: { c: 2 } })
    expect(compileProjection({ a: true, 'b.zz': 1, nope: 1 }).apply(doc)).toEqual({ id: 'x', a: 1, b: {} })
  })

  it('inclusion through arrays projects each object element and drops scalars', () => {
    expect(compileProjection({ 'e.f': 1 }).apply(doc)).toEqual({ id: 'x', e: [{ f: 1 }, { f: 3 }] })
  })

  it('exclusion removes the paths, keeps id', () => {
    expect(compileProjection({ a: 0, 'b.c': 0, 'e.g': false }).apply(doc)).toEqual({ id: 'x', _ver: { id: '1' }, b: { d: 3 }, e: [{ f: 1 }, { f: 3 }, 7], h: 'h' })
  })

  it('id is excluded only explicitly, also alongside an inclusion', () => {
    expect(compileProjection({ a: 1, id: 0 }).apply(doc)).toEqual({ a: 1 })
    expect(compileProjection({ id: 0 }).apply(doc)).toEqual({ _ver: { id: '1' }, a: 1, b: { c: 2, d: 3 }, e: doc.e, h: 'h' })
    expect(compileProjection({ id: 1 }).apply(doc)).toBe(doc)
  })

  it('overlapping paths: the shorter wins', () => {
    expect(compileProjection({ 'b.c': 1, b: 1 }).apply(doc)).toEqual({ id: 'x', b: { c: 2, d: 3 } })
    expect(compileProjection({ b: 1, 'b.c': 1 }).apply(doc)).toEqual({ id: 'x', b: { c: 2, d: 3 } })
  })

  it('no projection or {} returns the record itself; the input is never mutated', () => {
    expect(compileProjection(undefined).apply(doc)).toBe(doc)
    expect(compileProjection({}).apply(doc)).toBe(doc)
    const copy = structuredClone(doc)
    compileProjection({ a: 0 }).apply(doc)
    compileProjection({ 'b.c': 1 }).apply(doc)
    expect(doc).toEqual(copy)
  })

  it('projects ops: hidden paths dropped, values above visible paths trimmed', () => {
    const inc = compileProjection({ 'b.c': 1, a: 1 })
    expect(inc.op({ type: '$set', path: 'a', value: 5 })).toEqual({ type: '$set', path: 'a', value: 5 })
    expect(inc.op({ type: '$set', path: 'h', value: 'x' })).toBeNull()
    expect(inc.op({ type: '$set', path: 'b.d', value: 1 })).toBeNull()
    expect(inc.op({ type: '$set', path: 'b', value: { c: 1, d: 2 } })).toEqual({ type: '$set', path: 'b', value: { c: 1 } })
    expect(inc.op({ type: '$set', path: '', value: { id: 'x', a: 1, h: 2 } })).toEqual({ type: '$set', path: '', value: { id: 'x', a: 1 } })
    expect(inc.op({ type: '$unset', path: 'b' })).toEqual({ type: '$unset', path: 'b' })
    const exc = compileProjection({ secret: 0 })
    expect(exc.op({ type: '$set', path: 'secret.x', value: 1 })).toBeNull()
    expect(exc.op({ type: '$set', path: 'a', value: 1 })).toEqual({ type: '$set', path: 'a', value: 1 })
    expect(exc.op({ type: '$set', path: '', value: { a: 1, secret: 2 } })).toEqual({ type: '$set', path: '', value: { a: 1 } })
    expect(compileProjection({ 'e.f': 1 }).op({ type: '$set', path: 'e.0', value: { f: 1, g: 2 } })).toEqual({ type: '$set', path: 'e.0', value: { f: 1 } })
  })

  it('mixing inclusion and exclusion, or bad values, is request.invalid_field', () => {
    for (const p of [{ a: 1, b: 0 }, { a: 2 }, { a: 'yes' }, { a: null }, { 'a..b': 1 }, ['a'], 'a', { $x: 1 }]) {
      expectSvcError(() => compileProjection(p), 'request.invalid_field', { field: 'projection' })
    }
  })

  it('runQuery applies the projection to every record', () => {
    const r = runQuery([rec(1, { a: 1, b: 2 }), rec(2, { a: 3, b: 4 })], { projection: { a: 1 }, sort: ['-a'] })
    expect(r.records).toEqual([
      { id: 'r002', a: 3 },
      { id: 'r001', a: 1 },
    ])
  })
})
