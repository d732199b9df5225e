import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { candidatesFor, compileFilter, compileQuery, InMemoryIndex, runQuery, select, type Doc, type QuerySource } from '../../sync/query/index.ts'
import { intersectSorted, unionSorted } from '../../sync/query/source.ts'
import { ids, rec } from './helpers.ts'

const sortedSet = fc.uniqueArray(fc.integer({ min: 0, max: 200 }), { maxLength: 60 }).map((xs) => Int32Array.from(xs.sort((a, b) => a - b)))

describe('sorted slot lists', () => {
  it('intersectSorted and unionSorted agree with Set arithmetic, short or long second list', () => {
    fc.assert(
      fc.property(sortedSet, sortedSet, fc.boolean(), (a, b0, long) => {
        // A long `b` takes the binary-search branch (more than 16 times `a`).
        const b = long ? unionSorted([b0, Int32Array.from({ length: 400 }, (_, i) => 1000 + i)]) : b0
        const [short, other] = a.length <= b.length ? [a, b] : [b, a]
        const want = [...short].filter((x) => new Set(other).has(x))
        expect([...intersectSorted(short, other)]).toEqual(want)
        expect([...unionSorted([a, b])]).toEqual([...new Set([...a, ...b])].sort((x, y) => x - y))
      }),
      { numRuns: 300 },
    )
  })
})

describe('CompiledFilter.residual', () => {
  it('drops exactly the top-level equality clauses it is told are covered', () => {
    const f = compileFilter({ a: 1, b: { $gt: 2 }, c: { $in: ['x', 'y'] }, $and: [{ d: 4 }] })
    const [ha, hc, hd] = f.hints
    expect(f.hints.map((h) => h.path)).toEqual(['a', 'c', 'd'])
    const rest = f.residual(new Set([ha, hc]))!
    // a and c no longer tested; b and the $and still are.
    expect(rest({ id: 'x', a: 99, b: 3, c: 'z', d: 4 })).toBe(true)
    expect(rest({ id: 'x', b: 2, d: 4 })).toBe(false)
    expect(rest({ id: 'x', b: 3, d: 5 })).toBe(false)
    // A clause whose hint is not covered (its path not indexed) is still tested.
    const onlyA = f.residual(new Set([ha]))!
    expect(onlyA({ id: 'x', a: 99, b: 3, c: 'x', d: 4 })).toBe(true)
    expect(onlyA({ id: 'x', a: 99, b: 3, c: 'z', d: 4 })).toBe(false)
    // A hint inside $and is not a top-level clause: covering it removes nothing.
    expect(f.residual(new Set([hd]))).toBe(f.test)
    const eqOnly = compileFilter({ a: 1, c: { $eq: 'x' } })
    expect(eqOnly.residual(new Set(eqOnly.hints))).toBeNull()
    // Clauses with more than one operator are never dropped.
    const two = compileFilter({ a: { $eq: 1, $ne: 2 } })
    expect(two.residual(new Set(two.hints))).toBe(two.test)
  })
})

const TYPES = ['t0', 't1', 't2']
const STATUS = ['open', 'done', 'blocked']
const docArb = fc.record({
  types: fc.uniqueArray(fc.constantFrom(...TYPES), { maxLength: 2 }),
  status: fc.oneof(fc.constantFrom(...STATUS), fc.constant(null), fc.constantFrom(1, 2)),
  p: fc.integer({ min: 0, max: 20 }),
})
const toDoc = (i: number, d: { types: string[]; status: unknown; p: number }, version = 0): Doc =>
  rec(i, { core: { types: d.types, ...(d.status === null ? {} : { status: d.status }) }, p: d.p, v: version })

/** A random history of upserts and removes over ids r000..r029 (slots get reused). */
const historyArb = fc.array(
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ n: fc.integer({ min: 0, max: 29 }), d: docArb }).map((x) => ({ op: 'upsert' as const, ...x })) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 29 }).map((n) => ({ op: 'remove' as const, n })) },
  ),
  { maxLength: 120 },
)

function replay(
  history: Array<{ op: 'upsert'; n: number; d: { types: string[]; status: unknown; p: number } } | { op: 'remove'; n: number }>,
  ix: InMemoryIndex,
): Map<string, Doc> {
  const truth = new Map<string, Doc>()
  history.forEach((h, step) => {
    if (h.op === 'upsert') {
      const doc = toDoc(h.n, h.d, step)
      ix.upsert(doc)
      truth.set(doc.id, doc)
    } else {
      const id = rec(h.n).id
      expect(ix.remove(id)).toBe(truth.delete(id))
    }
  })
  return truth
}

describe('InMemoryIndex.intersect and candidatesFor', () => {
  it('intersect equals the brute-force intersection after any history of upserts and removes', () => {
    fc.assert(
      fc.property(
        historyArb,
        fc.uniqueArray(fc.constantFrom(...TYPES), { minLength: 1, maxLength: 2 }),
        fc.uniqueArray(fc.constantFrom(...STATUS, 1), { minLength: 1, maxLength: 2 }),
        (history, types, statuses) => {
          const ix = new InMemoryIndex(['core.types', 'core.status'])
          const truth = replay(history, ix)
          const got = ix.intersect([
            { path: 'core.types', values: types },
            { path: 'core.status', values: statuses },
          ])!
          const want = [...truth.values()].filter(
            (d) => (d.core as { types: string[] }).types.some((t) => types.includes(t)) && statuses.includes((d.core as { status?: never }).status as never),
          )
          expect(ids(got).sort()).toEqual(ids(want).sort())
          // Documents are the current ones, not stale versions.
          for (const d of got) expect(d).toBe(truth.get(d.id))
          expect(ix.intersect([{ path: 'nope', values: ['x'] }])).toBeUndefined()
        },
      ),
      { numRuns: 300 },
    )
  })

  it('intersecting several equality indexes gives the same results as a scan, exact when only equalities remain', () => {
    const docs = Array.from({ length: 60 }, (_, i) => rec(i, { core: { types: [TYPES[i % 3]], status: STATUS[Math.floor(i / 3) % 3] }, p: (i * 7) % 11 }))
    const ix = new InMemoryIndex(['core.types', 'core.status'], docs)
    const eq = compileQuery({ filter: { 'core.types': 't1', 'core.status': 'done' }, sort: ['-p'], limit: 5, includeTotal: true })
    const c = candidatesFor(ix, eq.filter)!
    expect(c.exact).toBe(true)
    expect(c.test).toBeNull()
    expect(ids([...c.docs]).sort()).toEqual(ids(docs.filter(eq.filter.test)).sort())
    expect(runQuery(ix, eq)).toEqual(runQuery(docs, eq))

    const mixed = compileQuery({ filter: { 'core.types': 't1', 'core.status': 'done', p: { $gte: 5 } }, sort: ['p'], includeTotal: true })
    const m = candidatesFor(ix, mixed.filter)!
    expect(m.exact).toBe(false)
    expect(m.test).not.toBe(mixed.filter.test) // the equalities are not tested again
    expect(runQuery(ix, mixed)).toEqual(runQuery(docs, mixed))
    expect(runQuery(ix, mixed).total).toBeGreaterThan(0)
  })

  it('an equality on an unindexed path is still tested', () => {
    const docs = Array.from({ length: 60 }, (_, i) => rec(i, { core: { types: [TYPES[i % 3]] }, p: i % 4 }))
    const ix = new InMemoryIndex(['core.types'], docs)
    const q = compileQuery({ filter: { 'core.types': 't1', p: 2 }, includeTotal: true })
    const c = candidatesFor(ix, q.filter)!
    expect(c.exact).toBe(false)
    expect(runQuery(ix, q)).toEqual(runQuery(docs, q))
    expect(runQuery(ix, q).total).toBe(docs.filter((d) => d.p === 2 && (d.core as { types: string[] }).types[0] === 't1').length)
  })

  it('a source without `exact` or `intersect` is probed by id and keeps the whole filter', () => {
    const docs = Array.from({ length: 40 }, (_, i) => rec(i, { a: i % 4, b: i % 5 }))
    const real = new InMemoryIndex(['a', 'b'], docs)
    // Over-approximates (`lookup` returns every document with a value >= the asked one).
    const loose: QuerySource = {
      size: docs.length,
      [Symbol.iterator]: () => docs[Symbol.iterator](),
      lookup: (path, v) => new Map(docs.filter((d) => (d[path] as number) >= (v as number)).map((d) => [d.id, d])),
    }
    const q = compileQuery({ filter: { a: 3, b: 4 }, includeTotal: true })
    const c = candidatesFor(loose, q.filter)!
    expect(c.exact).toBe(false)
    expect(c.test).toBe(q.filter.test)
    expect(runQuery(loose, q)).toEqual(runQuery(docs, q))
    expect(runQuery(real, q)).toEqual(runQuery(docs, q))
  })

  it('property: top-k over intersected candidates equals filter + full sort + slice', () => {
    fc.assert(
      fc.property(
        historyArb,
        fc.constantFrom(...TYPES),
        fc.constantFrom(...STATUS),
        fc.constantFrom(['p'], ['-p'], ['-p', 'id'], []),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 3 }),
        (history, t, s, sort, limit, offset) => {
          const ix = new InMemoryIndex(['core.types', 'core.status'])
          const truth = replay(history, ix)
          const body = { filter: { 'core.types': t, 'core.status': s }, sort, limit, offset, includeTotal: true }
          const q = compileQuery(body)
          const naive = [...truth.values()].filter(q.filter.test).sort(q.sort.compareDocs)
          const got = runQuery(ix, body)
          expect(ids(got.records)).toEqual(ids(naive.slice(offset, offset + limit)))
          expect(got.total).toBe(naive.length)
          expect(got).toEqual(runQuery([...truth.values()], body))
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('InMemoryIndex: indexes on demand', () => {
  const docs = Array.from({ length: 50 }, (_, i) => rec(i, { core: { types: [TYPES[i % 3]], status: STATUS[i % 3] }, p: i }))

  it('indexes a path at its afterLookups-th lookup and keeps it current', () => {
    const ix = new InMemoryIndex(['core.types'], docs, { autoIndex: { minDocs: 10, afterLookups: 2, maxPaths: 1 } })
    const q = compileQuery({ filter: { 'core.status': 'done' }, sort: ['-p'], limit: 3, includeTotal: true })
    expect(select(ix, q, 3).indexed).toBe(false) // first lookup: counted
    expect(ix.autoPaths).toEqual([])
    expect(select(ix, q, 3).indexed).toBe(true) // second: built
    expect(ix.autoPaths).toEqual(['core.status'])
    expect(ix.paths).toEqual(['core.types', 'core.status'])
    expect(runQuery(ix, q)).toEqual(runQuery(docs, q))

    // Writes after the build are reflected.
    ix.upsert(rec(7, { core: { types: ['t1'], status: 'done' }, p: 1000 }))
    ix.remove(rec(4).id)
    const now = [...ix]
    expect(runQuery(ix, q)).toEqual(runQuery(now, q))
    expect(ids(runQuery(ix, q).records)[0]).toBe('r007')

    // maxPaths reached: other paths stay scanned.
    ix.lookup('p', 1)
    expect(ix.lookup('p', 1)).toBeUndefined()
    expect(ix.autoPaths).toEqual(['core.status'])
  })

  it('small collections and sources without autoIndex are never indexed on demand', () => {
    const small = new InMemoryIndex([], docs, { autoIndex: { minDocs: 100, afterLookups: 1, maxPaths: 8 } })
    expect(small.lookup('core.status', 'done')).toBeUndefined()
    expect(small.autoPaths).toEqual([])
    const plain = new InMemoryIndex([], docs)
    for (let i = 0; i < 5; i++) expect(plain.lookup('core.status', 'done')).toBeUndefined()
  })
})
