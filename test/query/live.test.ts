import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { compileQuery, InMemoryIndex, LiveWindow, Mailbox, runQuery, type ChangesFrame, type Doc, type FrameOp } from '../../sync/query/index.ts'
import { expectSvcError, ids, rec } from './helpers.ts'

/** Ten matching records r001..r010 with s = n (sort key), plus non-matching ones. */
const base = (): Doc[] => [...Array.from({ length: 10 }, (_, i) => rec(i + 1, { kind: 'task', s: i + 1, title: `t${i + 1}` })), rec(50, { kind: 'note', s: 0 })]

const set = (path: string, value: unknown): FrameOp => ({ type: '$set', path, value })

describe('LiveWindow: snapshot', () => {
  it('the snapshot equals runQuery on the initial docs', () => {
    const body = { filter: { kind: 'task' }, sort: ['-s'], limit: 3, offset: 1, includeTotal: true, projection: { title: 1 } }
    const w = new LiveWindow(base(), body)
    expect(w.snapshot).toEqual(runQuery(base(), body))
    expect(w.snapshot).toMatchObject({ total: 10, hasNext: true })
    expect(w.windowIds()).toEqual(['r009', 'r008', 'r007'])
    expect(new LiveWindow(base(), { limit: 3 }).snapshot).not.toHaveProperty('total')
  })
})

describe('LiveWindow: frames', () => {
  const q = { filter: { kind: 'task' }, sort: ['s'], limit: 3 }

  it('a new record inside the window is added and displaces the last one', () => {
    const w = new LiveWindow(base(), q)
    const doc = rec(20, { kind: 'task', s: 1.5, title: 'new' })
    const f = w.apply({ versionId: 'v1', upserts: [doc], deletes: [] }, new Map([[doc.id, [set('', { kind: 'task', s: 1.5, title: 'new' })]]]))
    expect(f).toEqual({
      versionId: 'v1',
      added: [{ id: 'r020', doc, ops: [set('', { kind: 'task', s: 1.5, title: 'new' })] }],
      updated: [],
      removed: [{ id: 'r003', reason: 'displaced' }],
    })
    expect(w.windowIds()).toEqual(['r001', 'r020', 'r002'])
  })

  it('an edit inside the window is updated with its ops; position changes inside stay updates', () => {
    const w = new LiveWindow(base(), q)
    const doc = rec(2, { kind: 'task', s: 0.5, title: 'moved' })
    const ops = [set('s', 0.5), set('title', 'moved')]
    expect(w.apply({ versionId: 'v2', upserts: [doc], deletes: [] }, new Map([['r002', ops]]))).toEqual({
      versionId: 'v2',
      added: [],
      updated: [{ id: 'r002', doc, ops }],
      removed: [],
    })
    expect(w.windowIds()).toEqual(['r002', 'r001', 'r003'])
  })

  it('ops default to [] when the caller has none', () => {
    const w = new LiveWindow(base(), q)
    const f = w.apply({ versionId: 'v', upserts: [rec(1, { kind: 'task', s: 1, title: 'x' })], deletes: [] })
    expect(f?.updated).toEqual([{ id: 'r001', doc: rec(1, { kind: 'task', s: 1, title: 'x' }), ops: [] }])
  })

  it('delete: removed as deleted, the next record is pulled in from below the limit', () => {
    const w = new LiveWindow(base(), q)
    expect(w.apply({ versionId: 'v3', upserts: [], deletes: ['r002'] })).toEqual({
      versionId: 'v3',
      added: [{ id: 'r004', doc: base()[3], ops: [] }],
      updated: [],
      removed: [{ id: 'r002', reason: 'deleted' }],
    })
  })

  it('no longer matching: filtered-out, with pull-in', () => {
    const w = new LiveWindow(base(), q)
    const f = w.apply({ versionId: 'v4', upserts: [rec(1, { kind: 'note', s: 1 })], deletes: [] })
    expect(f?.removed).toEqual([{ id: 'r001', reason: 'filtered-out' }])
    expect(ids(f!.added)).toEqual(['r004'])
  })

  it('still matching but moved past the limit: displaced, with pull-in', () => {
    const w = new LiveWindow(base(), q)
    const f = w.apply({ versionId: 'v5', upserts: [rec(1, { kind: 'task', s: 99 })], deletes: [] })
    expect(f?.removed).toEqual([{ id: 'r001', reason: 'displaced' }])
    expect(ids(f!.added)).toEqual(['r004'])
    expect(w.windowIds()).toEqual(['r002', 'r003', 'r004'])
  })

  it('one write can remove for every reason at once', () => {
    const w = new LiveWindow(base(), { ...q, limit: 4 })
    const f = w.apply({ versionId: 'v6', upserts: [rec(2, { kind: 'note' }), rec(3, { kind: 'task', s: 50 })], deletes: ['r001'] })
    expect(f?.removed).toEqual([
      { id: 'r001', reason: 'deleted' },
      { id: 'r002', reason: 'filtered-out' },
      { id: 'r003', reason: 'displaced' },
    ])
    expect(ids(f!.added)).toEqual(['r005', 'r006', 'r007'])
  })

  it('writes outside the window, or invisible under the projection, give null', () => {
    const w = new LiveWindow(base(), { ...q, projection: { title: 1 } })
    expect(w.apply({ versionId: 'v', upserts: [rec(8, { kind: 'task', s: 8, title: 'changed' })], deletes: ['r009'] })).toBeNull()
    expect(w.apply({ versionId: 'v', upserts: [rec(60, { kind: 'note', s: 0 })], deletes: ['nope'] })).toBeNull()
    expect(w.apply({ versionId: 'v', upserts: [rec(1, { kind: 'task', s: 1, title: 't1', hidden: 1 })], deletes: [] }, new Map([['r001', [set('hidden', 1)]]]))).toBeNull()
  })

  it('docs and ops are projected', () => {
    const w = new LiveWindow(base(), { ...q, projection: { title: 1 } })
    const f = w.apply(
      { versionId: 'v', upserts: [rec(1, { kind: 'task', s: 1, title: 'T', secret: 's' })], deletes: [] },
      new Map([['r001', [set('title', 'T'), set('secret', 's')]]]),
    )
    expect(f?.updated).toEqual([{ id: 'r001', doc: { id: 'r001', title: 'T' }, ops: [set('title', 'T')] }])
  })

  it('with an offset, an insert before the window shifts it: last displaced, last of the prefix added', () => {
    const w = new LiveWindow(base(), { ...q, offset: 2 })
    expect(w.windowIds()).toEqual(['r003', 'r004', 'r005'])
    const f = w.apply({ versionId: 'v', upserts: [rec(30, { kind: 'task', s: 0 })], deletes: [] })
    expect(f?.removed).toEqual([{ id: 'r005', reason: 'displaced' }])
    expect(ids(f!.added)).toEqual(['r002'])
    const g = w.apply({ versionId: 'v', upserts: [], deletes: ['r030', 'r001'] })
    expect(g?.removed).toEqual([
      { id: 'r002', reason: 'displaced' },
      { id: 'r003', reason: 'displaced' },
    ])
    expect(ids(g!.added)).toEqual(['r005', 'r006'])
    expect(w.windowIds()).toEqual(['r004', 'r005', 'r006'])
  })
})

describe('LiveWindow: bounded memory and drift', () => {
  const q = { filter: { kind: 'task' }, sort: ['s'], limit: 10 }
  const thirty = () => Array.from({ length: 30 }, (_, i) => rec(i + 1, { kind: 'task', s: i + 1 }))

  it('holds offset + limit + reserve entries, not the whole matching set', () => {
    const w = new LiveWindow(thirty(), { ...q, offset: 5 }, { reserve: 3 })
    expect(w.heldCount).toBe(18)
    expect(w.complete).toBe(false)
    expect(new LiveWindow(thirty(), q).heldCount).toBe(26) // default reserve: max(limit, 16)
    expect(new LiveWindow(thirty(), q, { reserve: Infinity }).heldCount).toBe(30)
    expect(new LiveWindow(thirty(), { filter: q.filter }).heldCount).toBe(30) // no limit: everything
  })

  it('signals drifted once more than the budget of the window left without replacement', () => {
    const w = new LiveWindow(thirty(), q, { reserve: 2 })
    const del = (id: string) => w.apply({ versionId: id, upserts: [], deletes: [id] })
    // two departures are replaced from the reserve
    expect(ids(del('r001')!.added)).toEqual(['r011'])
    expect(ids(del('r002')!.added)).toEqual(['r012'])
    // then the window shrinks: 3 of 10 short is exactly 30 percent, still within budget
    for (const id of ['r003', 'r004', 'r005']) {
      expect(del(id)).toEqual({ versionId: id, added: [], updated: [], removed: [{ id, reason: 'deleted' }] })
      expect(w.drifted).toBe(false)
    }
    expect(w.windowIds()).toHaveLength(7)
    // a record that sorts before the horizon fills a slot again
    expect(ids(w.apply({ versionId: 'x', upserts: [rec(90, { kind: 'task', s: 5.5 })], deletes: [] })!.added)).toEqual(['r090'])
    del('r006')
    expect(w.drifted).toBe(false)
    const f = del('r007')
    expect(f?.removed).toEqual([{ id: 'r007', reason: 'deleted' }])
    expect(w.drifted).toBe(true)
    expect(del('r008')).toBeNull()
  })

  it('a record sorting past the horizon stays unknown', () => {
    const w = new LiveWindow(thirty(), q, { reserve: 2 })
    expect(w.apply({ versionId: 'v', upserts: [rec(99, { kind: 'task', s: 12.5 })], deletes: [] })).toBeNull()
    expect(w.heldCount).toBe(12)
    expect(w.apply({ versionId: 'v', upserts: [rec(98, { kind: 'task', s: 11.5 })], deletes: [] })).toBeNull()
    expect(w.heldCount).toBe(12) // entered the reserve, pushed r012 out past the cap
    for (const id of ['r001', 'r002']) w.apply({ versionId: id, upserts: [], deletes: [id] })
    expect(w.windowIds().slice(-2)).toEqual(['r011', 'r098'])
  })

  it('with a refill source it re-selects instead of drifting', () => {
    const ix = new InMemoryIndex(['kind'], thirty())
    const w = new LiveWindow(ix, q, { reserve: 1, refill: () => ix })
    for (let i = 1; i <= 15; i++) {
      const id = rec(i).id
      ix.remove(id)
      const f = w.apply({ versionId: String(i), upserts: [], deletes: [id] })
      expect(f?.removed).toEqual([{ id, reason: 'deleted' }])
      expect(ids(f!.added)).toEqual([rec(i + 10).id])
      expect(w.drifted).toBe(false)
    }
    expect(w.windowIds()).toEqual(ids(runQuery(ix, q).records))
  })

  it('limit 0 never shows anything and never drifts', () => {
    const w = new LiveWindow(thirty(), { ...q, limit: 0 }, { reserve: 0 })
    expect(w.snapshot.records).toEqual([])
    expect(w.apply({ versionId: 'v', upserts: [rec(99, { kind: 'task', s: 0 })], deletes: ['r001'] })).toBeNull()
    expect(w.drifted).toBe(false)
  })

  it('rejects a bad drift budget or reserve', () => {
    expectSvcError(() => new LiveWindow([], q, { driftBudgetPercent: 101 }), 'request.invalid_field', { field: 'driftBudgetPercent' })
    expectSvcError(() => new LiveWindow([], q, { driftBudgetPercent: -1 }), 'request.invalid_field')
    expect(() => new LiveWindow([], q, { reserve: -1 })).toThrow(RangeError)
    expect(new LiveWindow([], q, { driftBudgetPercent: 0 }).driftBudgetPercent).toBe(0)
  })
})

describe('LiveWindow: model check', () => {
  type Step = { kind: 'upsert'; n: number; g: number; s: number; t: string } | { kind: 'delete'; n: number }
  const step: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('upsert' as const),
        n: fc.integer({ min: 0, max: 14 }),
        g: fc.integer({ min: 0, max: 2 }),
        s: fc.integer({ min: 0, max: 6 }),
        t: fc.constantFrom('a', 'b'),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), n: fc.integer({ min: 0, max: 14 }) }) },
  )
  const mk = (n: number, g: number, s: number, t: string): Doc => rec(n, { g, s, t, other: n })

  it('frames rebuild the window exactly; reasons are right; bounded windows stay a prefix of the truth', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 14 }), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 6 })), { maxLength: 15 }),
        fc.array(fc.array(step, { minLength: 1, maxLength: 3 }), { maxLength: 25 }),
        fc.record({
          sort: fc.constantFrom(['s'], ['-s'], ['t', '-s'], []),
          limit: fc.integer({ min: 0, max: 5 }),
          offset: fc.integer({ min: 0, max: 3 }),
          projection: fc.constantFrom(undefined, { s: 1, t: 1 }, { other: 0 }),
        }),
        fc.constantFrom<'refill' | 'infinite' | 'bounded'>('refill', 'infinite', 'bounded'),
        fc.integer({ min: 0, max: 3 }),
        (initial, writes, body, mode, reserve) => {
          const query = { ...body, filter: { g: { $ne: 0 } } }
          const cq = compileQuery(query)
          const current = new Map<string, Doc>()
          for (const [n, g, s] of initial) current.set(rec(n).id, mk(n, g, s, 'a'))
          const w = new LiveWindow([...current.values()], query, {
            reserve: mode === 'infinite' ? Infinity : reserve,
            refill: mode === 'refill' ? () => current.values() : undefined,
            driftBudgetPercent: 100,
          })
          const client = new Map(w.snapshot.records.map((d) => [d.id, d]))
          for (const [v, write] of writes.entries()) {
            const upserts = new Map<string, Doc>()
            const deletes = new Set<string>()
            for (const st of write) {
              const id = rec(st.n).id
              if (st.kind === 'delete') {
                if (current.delete(id)) deletes.add(id)
                upserts.delete(id)
              } else {
                const d = mk(st.n, st.g, st.s, st.t)
                current.set(id, d)
                upserts.set(id, d)
                deletes.delete(id)
              }
            }
            const frame: ChangesFrame | null = w.apply({ versionId: String(v), upserts: [...upserts.values()], deletes: [...deletes] })
            if (frame) {
              for (const r of frame.removed) {
                expect(client.has(r.id)).toBe(true)
                client.delete(r.id)
                const now = current.get(r.id)
                const reason = !now ? 'deleted' : cq.filter.test(now) ? 'displaced' : 'filtered-out'
                expect(r.reason).toBe(reason)
              }
              for (const a of frame.added) {
                expect(client.has(a.id)).toBe(false)
                client.set(a.id, a.doc)
              }
              for (const u of frame.updated) {
                expect(client.has(u.id)).toBe(true)
                client.set(u.id, u.doc)
              }
            }
            const truth = runQuery(current.values(), query).records
            const live = w.records()
            expect([...client.keys()].sort()).toEqual(ids(live).sort())
            for (const d of live) expect(client.get(d.id)).toEqual(d)
            if (mode === 'bounded') expect(live).toEqual(truth.slice(0, live.length))
            else expect(live).toEqual(truth)
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('Mailbox', () => {
  it('validates capacity: default 256, minimum 16', () => {
    expect(new Mailbox().capacity).toBe(256)
    expect(new Mailbox(16).capacity).toBe(16)
    for (const c of [15, 0, -1, 16.5, Number.NaN, 1e9]) expectSvcError(() => new Mailbox(c), 'request.invalid_field', { field: 'mailboxCapacity' })
  })

  it('reports overflow when full instead of growing, and stays overflowed', () => {
    const m = new Mailbox<number>(16)
    for (let i = 0; i < 16; i++) expect(m.push(i)).toBe('ok')
    expect(m.push(16)).toBe('overflow')
    expect(m.size).toBe(16)
    expect(m.overflowed).toBe(true)
    expect(m.shift()).toBe(0)
    expect(m.push(17)).toBe('overflow')
    expect(m.drain()).toEqual(Array.from({ length: 15 }, (_, i) => i + 1))
  })

  it('is a FIFO ring across wrap-around', () => {
    const m = new Mailbox<number>(16)
    const out: number[] = []
    for (let i = 0; i < 100; i++) {
      m.push(i)
      if (i % 10 === 9) for (let j = 0; j < 10; j++) out.push(m.shift()!)
    }
    out.push(...m.drain())
    expect(out).toEqual(Array.from({ length: 100 }, (_, i) => i))
    expect(m.shift()).toBeUndefined()
  })

  it('clear() drops the backlog and the ring keeps its order afterwards', () => {
    const m = new Mailbox<number>(16)
    for (let i = 0; i < 10; i++) m.push(i)
    m.shift()
    m.clear()
    expect([m.size, m.shift()]).toEqual([0, undefined])
    for (let i = 0; i < 16; i++) expect(m.push(i)).toBe('ok')
    expect(m.drain()).toEqual(Array.from({ length: 16 }, (_, i) => i))
  })

  it('next() waits for a push; close() ends waiting and refuses pushes', async () => {
    const m = new Mailbox<string>(16)
    const p = m.next()
    m.push('a')
    expect(await p).toBe('a')
    m.push('b')
    expect(await m.next()).toBe('b')
    const q = m.next()
    m.close()
    expect(await q).toBeUndefined()
    expect(m.push('c')).toBe('closed')
  })
})
