import { describe, expect, it } from 'vitest'
import { deleteRecordsDeclared, modifyDeclared } from '../../sync/space/types/declared-writes.ts'
import { newSpace, twoMembers } from './helpers.ts'

// title: anyone may change; note: only the record's creator; sku: write-once.
const FIELDS = { title: { type: 'string', mutableBy: 'any' }, note: { type: 'string', mutableBy: 'author' }, sku: { type: 'string' } } as const

const set = (path: string, value: unknown) => ({ type: '$set' as const, path, value: value as never })

describe('declared dataset rules on /modify and /delete-records', () => {
  it('write-once, undeclared and stamped fields are dropped op by op; the rest is written', async () => {
    const { engine, svc } = await newSpace()
    const t = await svc.createType({ xKey: 'c' })
    const { datasets } = await svc.createPart(t.id, { key: 'items', datasets: [{ fields: FIELDS }] })
    const ds = datasets[0].collection
    const obj = await engine.createObject({ types: [t.id] })
    await engine.settled()
    const first = await modifyDeclared(engine, { objectId: obj, dataset: ds, records: [{ id: 'r', ops: [set('', { title: 'A', sku: 's1' })] }] })
    expect(first.rejections).toBeUndefined()
    const res = await modifyDeclared(engine, {
      objectId: obj,
      dataset: ds,
      records: [{ id: 'r', ops: [set('title', 'B'), set('sku', 's2'), set('color', 'red'), set('_ver', 'x'), set('', { title: 'C', sku: 's3' })] }],
    })
    expect(res.rejections?.map((r) => [r.index, r.code])).toEqual([
      [1, 'upsert.immutable_field'],
      [2, 'upsert.rejected'],
      [3, 'upsert.rejected'],
      [4, 'upsert.immutable_field'],
    ])
    expect((await engine.replica.getRecord(obj, ds, 'r'))?.value).toEqual({ title: 'B', sku: 's1' })
    // A whole-record set that leaves the write-once field as it is passes.
    await modifyDeclared(engine, { objectId: obj, dataset: ds, records: [{ id: 'r', ops: [set('', { title: 'D', sku: 's1' })] }] })
    expect((await engine.replica.getRecord(obj, ds, 'r'))?.value).toEqual({ title: 'D', sku: 's1' })
    // Everything refused: nothing written, no change id.
    const none = await modifyDeclared(engine, { objectId: obj, dataset: ds, records: [{ id: 'r', ops: [set('sku', 'zzz')] }] })
    expect(none).toMatchObject({ changeId: '', recordIds: [], rejections: [{ recordId: 'r', index: 0, code: 'upsert.immutable_field' }] })
  })

  it('a dataset no type declares is free', async () => {
    const { engine } = await newSpace()
    const obj = await engine.createObject()
    await engine.settled()
    const res = await modifyDeclared(engine, { objectId: obj, dataset: 'free', records: [{ id: 'r', ops: [set('_x', 1), set('anything', 2)] }] })
    expect(res.rejections).toBeUndefined()
  })

  it('mutableBy author and deleteBy author hold against another member', async () => {
    const { a, b, svcA, sync } = await twoMembers()
    const t = await svcA.createType({ xKey: 'c' })
    const { datasets } = await svcA.createPart(t.id, { key: 'items', datasets: [{ deleteBy: 'author', fields: FIELDS }] })
    const ds = datasets[0].collection
    const obj = await a.createObject({ types: [t.id] })
    await a.settled()
    await modifyDeclared(a, { objectId: obj, dataset: ds, records: [{ id: 'mine', ops: [set('', { title: 'A', note: 'n' })] }] })
    await sync()
    const res = await modifyDeclared(b, { objectId: obj, dataset: ds, records: [{ id: 'mine', ops: [set('note', 'theirs'), set('title', 'B')] }] })
    expect(res.rejections?.map((r) => [r.index, r.code])).toEqual([[0, 'upsert.not_author']])
    const del = await deleteRecordsDeclared(b, { objectId: obj, dataset: ds, recordIds: ['mine'] })
    expect(del.rejections?.map((r) => [r.recordId, r.code])).toEqual([['mine', 'upsert.not_author']])
    await modifyDeclared(b, { objectId: obj, dataset: ds, records: [{ id: 'theirs', ops: [set('', { title: 'T' })] }] })
    const own = await deleteRecordsDeclared(b, { objectId: obj, dataset: ds, recordIds: ['theirs'] })
    expect(own.rejections).toBeUndefined()
    await sync()
    expect((await a.replica.getRecord(obj, ds, 'mine'))?.value).toEqual({ title: 'B', note: 'n' })
    expect((await a.replica.getRecord(obj, ds, 'theirs'))?.deleted).toBe(true)
    // The creator deletes its own record.
    expect((await deleteRecordsDeclared(a, { objectId: obj, dataset: ds, recordIds: ['mine'] })).rejections).toBeUndefined()
  })
})
