import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { compileQuery, InMemoryIndex, MAX_LIMIT, runQuery, select, type Doc } from '../../sync/query/index.ts'
import { expectSvcError, ids, rec } from './helpers.ts'

const many = Array.from({ length: 25 }, (_, i) => rec(i, { n: i % 5, even: i % 2 === 0 }))

describe('runQuery: pagination', () => {
  it('limit and offset page through the sorted matches', () => {
    expect(ids(runQuery(many, { limit: 3 }).records)).toEqual(['r000', 'r001', 'r002'])
    expect(ids(runQuery(many, { limit: 3, offset: 3 }).records)).toEqual(['r003', 'r004', 'r005'])
    expect(ids(runQuery(many, { filter: { even: true }, sort: ['-n'], limit: 2, offset: 1 }).records)).toEqual(['r014', 'r024'])
    expect(runQuery(many, { offset: 30 }).records).toEqual([])
    expect(runQuery(many, {}).records).toHaveLength(25)
  })

  it('includeTotal adds total and hasNext; without it neither appears', () => {
    expect(runQuery(many, { limit: 10 })).not.toHaveProperty('total')
    expect(runQuery(many, { limit: 10 })).not.toHaveProperty('hasNext')
    const p1 = runQuery(many, { filter: { even: true }, limit: 5, includeTotal: true })
    expect([p1.records.length, p1.total, p1.hasNext]).toEqual([5, 13, true])
    const p3 = runQuery(many, { filter: { even: true }, limit: 5, offset: 10, includeTotal: true })
    expect([p3.records.length, p3.total, p3.hasNext]).toEqual([3, 13, false])
    const exact = runQuery(many, { filter: { even: true }, limit: 5, offset: 8, includeTotal: true })
    expect([exact.records.length, exact.total, exact.hasNext]).toEqual([5, 13, false])
    const count = runQuery(many, { limit: 0, includeTotal: true })
    expect([count.records.length, count.total, count.hasNext]).toEqual([0, 25, true])
    const all = runQuery(many, { includeTotal: true })
    expect([all.records.length, all.total, all.hasNext]).toEqual([25, 25, false])
  })

  it('pages backwards with a _ver.id cursor filter', () => {
    const last = runQuery(many, { sort: ['-_ver.id'], limit: 5 }).records
    expect(ids(last)).toEqual(['r024', 'r023', 'r022', 'r021', 'r020'])
    const oldest = (last[4]._ver as { id: string }).id
    const prev = runQuery(many, { filter: { '_ver.id': { $lt: oldest } }, sort: ['-_ver.id'], limit: 5 }).records
    expect(ids(prev)).toEqual(['r019', 'r018', 'r017', 'r016', 'r015'])
  })

  it('bounded selection equals a full sort for every k', () => {
    const docs = Array.from({ length: 200 }, (_, i) => rec(i, { v: (i * 7919) % 37 }))
    const full = ids(runQuery(docs, { sort: ['v'] }).records)
    for (const k of [0, 1, 2, 10, 50, 199, 200, 500]) expect(ids(runQuery(docs, { sort: ['v'], limit: k }).records)).toEqual(full.slice(0, k))
  })

  it('validates limit, offset and includeTotal', () => {
    for (const [field, v] of [
      ['limit', -1],
      ['limit', 1.5],
      ['limit', MAX_LIMIT + 1],
      ['limit', '5'],
      ['offset', -1],
      ['offset', NaN],
      ['offset', 2 ** 60],
      ['includeTotal', 'yes'],
    ] as const) {
      expectSvcError(() => runQuery(many, { [field]: v }), 'request.invalid_field', { field })
    }
    expect(runQuery(many, { limit: MAX_LIMIT }).records).toHaveLength(25)
  })

  it('a compiled query can be reused', () => {
    const q = compileQuery({ filter: { n: 1 }, limit: 2 })
    expect(ids(runQuery(many, q).records)).toEqual(['r001', 'r006'])
    expect(ids(runQuery(many.slice(5), q).records)).toEqual(['r006', 'r011'])
  })
})

describe('InMemoryIndex', () => {
  it('answers equality lookups, array elements included, and tracks upsert/remove', () => {
    const ix = new InMemoryIndex(
      ['core.types', 'n'],
      [
        { id: 'a', core: { types: ['t1', 't2'] }, n: 1 },
        { id: 'b', core: { types: ['t2'] }, n: '1' },
      ],
    )
    expect([...ix.lookup('core.types', 't2')!.keys()].sort()).toEqual(['a', 'b'])
    expect([...ix.lookup('n', 1)!.keys()]).toEqual(['a'])
    expect([...ix.lookup('n', '1')!.keys()]).toEqual(['b'])
    expect(ix.lookup('other', 1)).toBeUndefined()
    ix.upsert({ id: 'a', core: { types: ['t3'] }, n: 2 })
    expect([...ix.lookup('core.types', 't2')!.keys()]).toEqual(['b'])
    expect([...ix.lookup('core.types', 't3')!.keys()]).toEqual(['a'])
    expect(ix.remove('b')).toBe(true)
    expect(ix.remove('b')).toBe(false)
    expect(ix.lookup('core.types', 't2')!.size).toBe(0)
    expect(ix.size).toBe(1)
    expect([...ix].map((d) => d.id)).toEqual(['a'])
  })

  it('runQuery uses the index when a hint is indexed and selective', () => {
    const docs = Array.from({ length: 100 }, (_, i) => rec(i, { core: { types: [`t${i % 10}`] }, n: i }))
    const ix = new InMemoryIndex(['core.types'], docs)
    const q = compileQuery({ filter: { 'core.types': 't3', n: { $gte: 50 } }, sort: ['-n'], limit: 3, includeTotal: true })
    const sel = select(ix, q, 3)
    expect(sel.indexed).toBe(true)
    expect(sel.total).toBe(5)
    expect(ids(runQuery(ix, q).records)).toEqual(['r093', 'r083', 'r073'])
    expect(select(ix, compileQuery({ filter: { n: 5 } }), 1).indexed).toBe(false)
    expect(select(docs, q, 3).indexed).toBe(false)
  })

  it('property: indexed and full-scan runs give identical results on random docs and filters', () => {
    const scalar = fc.oneof(fc.constantFrom('a', 'b', 'c', 'A', ''), fc.integer({ min: -2, max: 3 }), fc.boolean())
    const value = fc.oneof(
      { weight: 4, arbitrary: scalar },
      { weight: 1, arbitrary: fc.constant(null) },
      { weight: 2, arbitrary: fc.array(scalar, { maxLength: 3 }) },
      { weight: 1, arbitrary: fc.constantFrom({ $date: '2024-01-01T00:00:00Z' }, { $date: '2025-01-01T00:00:00Z' }) },
    )
    const docArb = fc.record(
      {
        core: fc.record({ types: fc.array(fc.constantFrom('t1', 't2', 't3'), { maxLength: 2 }), name: value }, { requiredKeys: ['types'] }),
        x: value,
        y: value,
        items: fc.array(fc.record({ k: scalar }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    )
    const docsArb = fc.array(docArb, { maxLength: 40 }).map((ds) => ds.map((d, i): Doc => ({ ...d, id: `d${i}`, _ver: { id: String(i % 7).padStart(3, '0') } })))
    const path = fc.constantFrom('core.types', 'core.name', 'x', 'y', 'items.k')
    const leaf = fc.oneof(
      fc.record({ p: path, v: scalar }).map(({ p, v }) => ({ [p]: v })),
      fc.record({ p: path, v: fc.array(scalar, { minLength: 1, maxLength: 3 }) }).map(({ p, v }) => ({ [p]: { $in: v } })),
      fc.record({ p: path, v: scalar }).map(({ p, v }) => ({ [p]: { $gte: v } })),
      fc.record({ p: path, v: scalar }).map(({ p, v }) => ({ [p]: { $ne: v } })),
      fc.record({ p: path, v: fc.array(scalar, { minLength: 1, maxLength: 2 }) }).map(({ p, v }) => ({ [p]: { $all: v } })),
      fc.record({ p: path, v: fc.boolean() }).map(({ p, v }) => ({ [p]: { $exists: v } })),
    )
    const filterArb = fc.oneof(
      leaf,
      fc.array(leaf, { minLength: 1, maxLength: 3 }).map((fs) => ({ $and: fs })),
      fc.array(leaf, { minLength: 1, maxLength: 3 }).map((fs) => ({ $or: fs })),
      fc.tuple(leaf, leaf).map(([a, b]) => ({ ...a, ...b })),
    )
    const sortArb = fc.array(fc.constantFrom('x', '-x', 'y', '-y', 'core.name', '-core.name', 'id'), { maxLength: 2 })
    let indexedRuns = 0
    fc.assert(
      fc.property(
        docsArb,
        filterArb,
        sortArb,
        fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
        fc.integer({ min: 0, max: 5 }),
        (docs, filter, sort, limit, offset) => {
          const ix = new InMemoryIndex(['core.types', 'x', 'y', 'core.name', 'items.k'], docs)
          const body = { filter, sort, limit, offset, includeTotal: true }
          const scanned = runQuery(docs, body)
          expect(runQuery(ix, body)).toEqual(scanned)
          if (select(ix, compileQuery(body), 1).indexed) indexedRuns++
          // and the naive definition: filter, full sort, slice
          const q = compileQuery(body)
          const naive = docs.filter(q.filter.test).sort(q.sort.compareDocs)
          expect(scanned.total).toBe(naive.length)
          expect(ids(scanned.records)).toEqual(ids(naive.slice(offset, limit === undefined ? undefined : offset + limit)))
        },
      ),
      { numRuns: 400 },
    )
    expect(indexedRuns).toBeGreaterThan(100)
  })
})
