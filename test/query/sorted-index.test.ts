import { describe, expect, it } from 'vitest'
import { compileQuery, runQuery, select } from '../../sync/query/snapshot.ts'
import { InMemoryIndex } from '../../sync/query/source.ts'
import { SortedIndex } from '../../sync/query/sorted-index.ts'
import { compileSort } from '../../sync/query/sort.ts'
import type { Doc } from '../../sync/query/values.ts'

/** A small deterministic generator (mulberry32), so a failure replays. */
function rng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const VALUES: unknown[] = [undefined, null, true, false, 0, 1, -3, 2.5, 'a', 'b', 'B', 'é', '', ['x'], { o: 1 }, { $date: '2026-01-01T00:00:00Z' }]

function randomDoc(r: () => number, id: string, ver: number): Doc {
  const pick = () => VALUES[Math.floor(r() * VALUES.length)]
  const doc: Record<string, unknown> = { id, _ver: { id: `v${String(ver).padStart(6, '0')}` } }
  for (const f of ['name', 'n', 'tag']) {
    const v = pick()
    if (v !== undefined) doc[f] = v
  }
  doc.core = { name: `Object ${Math.floor(r() * 50)}` }
  return doc as Doc
}

const SORTS = [['name'], ['-name'], ['n', '-tag'], ['core.name'], ['-core.name', 'n'], []]
const FILTERS = [undefined, { n: { $gte: 0 } }, { tag: { $exists: true } }, { $or: [{ name: 'a' }, { n: 1 }] }]

describe('a kept sort order answers like a full selection', () => {
  it('same records, total and hasNext for random documents, updates, sorts, filters and pages', () => {
    const r = rng(20261123)
    const kept = new InMemoryIndex([], [], { autoSort: { minDocs: 0, afterQueries: 1, maxSorts: 16 } })
    const plain = new Map<string, Doc>()
    let ver = 0
    for (let round = 0; round < 60; round++) {
      // Some inserts, replacements and removals between queries.
      for (let i = 0; i < 40; i++) {
        const id = `r${Math.floor(r() * 300)}`
        if (r() < 0.2) {
          kept.remove(id)
          plain.delete(id)
        } else {
          const doc = randomDoc(r, id, ver++)
          kept.upsert(doc)
          plain.set(id, doc)
        }
      }
      for (let qn = 0; qn < 10; qn++) {
        const body = {
          sort: SORTS[Math.floor(r() * SORTS.length)],
          filter: FILTERS[Math.floor(r() * FILTERS.length)],
          offset: Math.floor(r() * 80),
          limit: 1 + Math.floor(r() * 40),
          includeTotal: r() < 0.5,
        }
        const want = runQuery([...plain.values()], body)
        const got = runQuery(kept, body)
        expect(got, JSON.stringify(body)).toEqual(want)
      }
    }
    // Every sort above is kept now: the comparison went through the kept orders.
    expect(kept.sortKeys.sort()).toEqual(SORTS.map((s) => s.join(',')).sort())
  })

  it('an unfiltered page skips whole blocks: it reads only the page', () => {
    const docs: Doc[] = Array.from({ length: 10_000 }, (_, i) => ({ id: `o${i}`, _ver: { id: 'v' }, name: `Object ${String(i).padStart(5, '0')}` }))
    const sort = compileSort(['name'])
    const ix = new SortedIndex(sort, docs)
    const seen: string[] = []
    ix.walk(5_000, (e) => seen.push(e.id) < 3)
    expect(seen).toEqual(['o5000', 'o5001', 'o5002'])
    // The page through select: offset entries are not materialized.
    const kept = new InMemoryIndex([], docs, { autoSort: { minDocs: 0, afterQueries: 1, maxSorts: 1 } })
    const sel = select(kept, compileQuery({ sort: ['name'], offset: 5_000, limit: 50 }), 5_050, { offset: 5_000 })
    expect(sel.skipped).toBe(5_000)
    expect(sel.top).toHaveLength(50)
    expect(sel.top[0].id).toBe('o5000')
  })

  it('is built on the afterQueries-th query with a sort, not for small collections, and at most maxSorts', () => {
    const docs = Array.from({ length: 20 }, (_, i) => ({ id: `d${i}`, n: i }))
    const ix = new InMemoryIndex([], docs, { autoSort: { minDocs: 10, afterQueries: 2, maxSorts: 1 } })
    const q = compileQuery({ sort: ['-n'], limit: 3 })
    expect(ix.sortedBy(q.sort)).toBeUndefined()
    expect(ix.sortedBy(q.sort)).toBeDefined()
    expect(ix.sortedBy(compileQuery({ sort: ['n'] }).sort)).toBeUndefined()
    expect(ix.sortedBy(compileQuery({ sort: ['n'] }).sort)).toBeUndefined()
    const small = new InMemoryIndex([], docs.slice(0, 5), { autoSort: { minDocs: 10, afterQueries: 1, maxSorts: 1 } })
    expect(small.sortedBy(q.sort)).toBeUndefined()
  })
})
