import { describe, expect, it } from 'vitest'
import { modifyDeclared } from '../../sync/space/types/declared-writes.ts'
import { newSpace, twoMembers } from './helpers.ts'

const set = (path: string, value: unknown) => ({ type: '$set' as const, path, value: value as never })
const unset = (path: string) => ({ type: '$unset' as const, path })
const inc = (path: string, by: number) => ({ type: '$inc' as const, path, value: by as never })

/** How many changes history lists for an object (its creation is not listed). */
async function historyCount(engine: Awaited<ReturnType<typeof newSpace>>['engine'], objectId: string): Promise<number> {
  return (await engine.services.history.list(objectId, { limit: 200 })).changes.length
}

describe('writes that change nothing commit nothing', () => {
  it('40,000 identical sets make zero history entries and keep the heads', async () => {
    const { engine } = await newSpace()
    const obj = await engine.createObject()
    await engine.settled()
    const first = await engine.modify({ objectId: obj, dataset: 'notes', records: [{ id: 'r', ops: [set('title', 'same')] }] })
    expect(first.changeId).not.toBe('')
    expect(first.recordIds).toEqual(['r'])
    const heads = engine.replica.heads(obj)
    const before = await historyCount(engine, obj)
    for (let i = 0; i < 40_000; i++) {
      const res = await engine.modify({ objectId: obj, dataset: 'notes', records: [{ id: 'r', ops: [set('title', 'same')] }] })
      if (res.changeId !== '' || res.recordIds.length !== 0) throw new Error(`set ${i} committed ${res.changeId}`)
    }
    expect(await historyCount(engine, obj)).toBe(before)
    expect(engine.replica.heads(obj)).toEqual(heads)
  }, 300_000)

  it('a whole-record set equal to the record, an unset of an absent field, and a nested equal set are no-ops', async () => {
    const { engine } = await newSpace()
    const obj = await engine.createObject()
    await engine.settled()
    await engine.modify({ objectId: obj, dataset: 'notes', records: [{ id: 'r', ops: [set('', { title: 't', meta: { n: 1, tags: ['a'] } })] }] })
    const heads = engine.replica.heads(obj)
    for (const ops of [
      [set('', { meta: { tags: ['a'], n: 1 }, title: 't' })],
      [unset('missing')],
      [set('meta.n', 1)],
      [set('meta.tags', ['a'])],
      [set('title', 't'), unset('nope')],
    ]) {
      const res = await engine.modify({ objectId: obj, dataset: 'notes', records: [{ id: 'r', ops }] })
      expect(res, JSON.stringify(ops)).toMatchObject({ changeId: '', recordIds: [] })
    }
    expect(engine.replica.heads(obj)).toEqual(heads)
  })

  it('a change is judged whole: ops that end where they started are a no-op, any real difference commits all of them', async () => {
    const { engine } = await newSpace()
    const obj = await engine.createObject()
    await engine.settled()
    await engine.modify({ objectId: obj, dataset: 'notes', records: [{ id: 'r', ops: [set('n', 0)] }] })
    // n: 0 -> 1 -> 0 within one change leaves the record as it was.
    expect((await engine.modify({ objectId: obj, dataset: 'notes', records: [{ id: 'r', ops: [set('n', 1), set('n', 0)] }] })).changeId).toBe('')
    // The second op equals the stored value but undoes the first: written, and it ends at 0.
    const real = await engine.modify({ objectId: obj, dataset: 'notes', records: [{ id: 'r', ops: [set('n', 0), set('m', 2)] }] })
    expect(real.changeId).not.toBe('')
    expect((await engine.replica.getRecord(obj, 'notes', 'r'))?.value).toEqual({ n: 0, m: 2 })
    // A set that creates a record, even with a value like an absent one's, is a change.
    expect((await engine.modify({ objectId: obj, dataset: 'notes', records: [{ id: 'fresh', ops: [set('', {})] }] })).changeId).not.toBe('')
    // A delete always is.
    expect((await engine.deleteRecords({ objectId: obj, dataset: 'notes', recordIds: ['fresh'] })).changeId).not.toBe('')
  })

  it('/modify on an undeclared dataset with every op rejected returns no change id and no record ids', async () => {
    const { engine } = await newSpace()
    const obj = await engine.createObject()
    await engine.settled()
    await engine.modify({ objectId: obj, dataset: 'free', records: [{ id: 'r', ops: [set('s', 'text')] }] })
    const heads = engine.replica.heads(obj)
    // $inc on a string is rejected by the op resolver: nothing is left to write.
    const res = await modifyDeclared(engine, { objectId: obj, dataset: 'free', records: [{ id: 'r', ops: [inc('s', 1)] }] })
    expect(res.changeId).toBe('')
    expect(res.recordIds).toEqual([])
    expect(res.rejections?.length).toBe(1)
    expect(engine.replica.heads(obj)).toEqual(heads)
  })

  it('a property value set to its current value commits nothing', async () => {
    const { engine, svc } = await newSpace()
    const t = await svc.createType({ xKey: 'note' })
    const { propId } = await svc.createProperty(t.id, { name: 'Status', kind: 'string', xKey: 'status' })
    const obj = await engine.createObject({ types: [t.id] })
    await engine.settled()
    const first = await svc.setValues(obj, t.id, { [propId]: 'open' })
    const heads = engine.replica.heads(obj)
    const again = await svc.setValues(obj, t.id, { [propId]: 'open' })
    expect(again).toMatchObject({ changeId: '' })
    expect(engine.replica.heads(obj)).toEqual(heads)
    expect(first).not.toMatchObject({ changeId: '' })
  })

  it('a no-op write sends nothing to another member', async () => {
    const { a, b, sync } = await twoMembers()
    const obj = await a.createObject()
    await a.settled()
    await a.modify({ objectId: obj, dataset: 'notes', records: [{ id: 'r', ops: [set('x', 1)] }] })
    await sync()
    const heads = b.replica.heads(obj)
    await a.modify({ objectId: obj, dataset: 'notes', records: [{ id: 'r', ops: [set('x', 1)] }] })
    await sync()
    expect(b.replica.heads(obj)).toEqual(heads)
    expect(a.replica.heads(obj)).toEqual(heads)
  })
})
