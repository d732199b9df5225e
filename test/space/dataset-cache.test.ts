import { describe, expect, it } from 'vitest'
import { DatasetCache } from '../../sync/space/dataset-cache.ts'
import { runQuery } from '../../sync/query/snapshot.ts'
import { twoMembers } from './helpers.ts'

const ids = (src: Iterable<{ id?: unknown }>) => [...src].map((d) => String(d.id)).sort()
const stable = (src: Iterable<Record<string, unknown>>) => JSON.stringify([...src].sort((x, y) => String(x.id).localeCompare(String(y.id))))

describe('dataset cache', () => {
  it("holds what a fresh read gives, through local writes, deletes, another member's synced writes and a deleted object", async () => {
    const { a, b, sync } = await twoMembers()
    const obj = await a.createObject({})
    await sync()
    const put = (e: typeof a, id: string, v: unknown) => e.modify({ objectId: obj, dataset: 'notes', records: [{ id, ops: [{ type: '$set', path: 'v', value: v }] }] })
    for (let i = 0; i < 20; i++) await put(a, `r${i}`, i)
    const held = await a.datasetSource(obj, 'notes')
    expect(ids(held)).toHaveLength(20)
    // The second query gets the same source (held), not a new read.
    expect(await a.datasetSource(obj, 'notes')).toBe(held)

    await put(a, 'r1', 'changed')
    await a.deleteRecords({ objectId: obj, dataset: 'notes', recordIds: ['r2', 'r3'] })
    await put(a, 'new', 1)
    await sync()
    await put(b, 'from-b', 'b')
    await put(b, 'r4', 'b wins')
    await sync()
    const now = await a.datasetSource(obj, 'notes')
    expect(stable(now as Iterable<Record<string, unknown>>)).toBe(stable(await a.datasetDocs(obj, 'notes')))
    expect(ids(now)).toContain('from-b')
    expect(ids(now)).not.toContain('r2')

    await a.deleteObject(obj)
    await expect(a.datasetSource(obj, 'notes')).rejects.toMatchObject({ code: 'object.not_found' })
  })

  it('keeps at most its bounds, dropping the least recently used', () => {
    const cache = new DatasetCache({ maxDatasets: 2, maxDocs: 5 })
    const docs = (n: number, p: string) => Array.from({ length: n }, (_, i) => ({ id: `${p}${i}` }))
    cache.put('o', 'a', docs(2, 'a'))
    cache.put('o', 'b', docs(2, 'b'))
    cache.get('o', 'a')
    cache.put('o', 'c', docs(2, 'c'))
    expect([cache.holds('o', 'a'), cache.holds('o', 'b'), cache.holds('o', 'c')]).toEqual([true, false, true])
    // Growing past the document bound drops the least recently used.
    cache.update('o', 'c', 'c9', { id: 'c9' })
    cache.update('o', 'c', 'c8', { id: 'c8' })
    expect(cache.holds('o', 'a')).toBe(false)
    expect(cache.holds('o', 'c')).toBe(true)
    // A dataset larger than the whole bound is served but never held.
    const big = cache.put('p', 'big', docs(6, 'x'))
    expect(ids(big)).toHaveLength(6)
    expect(cache.holds('p', 'big')).toBe(false)
    cache.dropObject('o')
    expect(cache.holds('o', 'c')).toBe(false)
  })

  it('a query naming its ids reads only those records, with the answer a full read gives, and holds nothing', async () => {
    // The cold open of docs/performance.md "Side by side": one record looked up right after a
    // restart read the whole dataset first (100,000 records, seconds). Fails with a route that
    // always went through datasetSource.
    const { a } = await twoMembers()
    const obj = await a.createObject({})
    const put = (id: string, v: unknown) => a.modify({ objectId: obj, dataset: 'big', records: [{ id, ops: [{ type: '$set', path: 'v', value: v }] }] })
    for (let i = 0; i < 30; i++) await put(`r${i}`, i)
    await a.deleteRecords({ objectId: obj, dataset: 'big', recordIds: ['r5'] })
    let listed = 0
    const list = a.replica.listRecords.bind(a.replica)
    a.replica.listRecords = (...args: Parameters<typeof list>) => {
      listed++
      return list(...args)
    }
    const lookups: unknown[] = [{ id: 'r7' }, { id: { $eq: 'r8' } }, { id: { $in: ['r1', 'r5', 'nope', 'r1'] } }]
    const answers = []
    for (const filter of lookups) answers.push(runQuery(await a.datasetSourceFor(obj, 'big', filter), { filter, sort: ['id'] }))
    expect(listed).toBe(0)
    expect(answers.map((r) => r.records.map((d) => d.id))).toEqual([['r7'], ['r8'], ['r1']])
    // The same answers, byte for byte, as a query of the whole dataset.
    const whole = await a.datasetSource(obj, 'big')
    expect(listed).toBe(1)
    for (const [i, filter] of lookups.entries()) expect(JSON.stringify(answers[i])).toBe(JSON.stringify(runQuery(whole, { filter, sort: ['id'] })))
    // Anything else reads the dataset (held now, so no further read).
    await a.datasetSourceFor(obj, 'big', { v: 3 })
    await a.datasetSourceFor(obj, 'big', { id: 'r3', v: 3 })
    expect(listed).toBe(1)
  })
})
