import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, newObject, newSpace, ok, type Booted } from './helpers.ts'

let b: Booted
let spaceId: string
let S: string
let obj: string
beforeAll(async () => {
  b = await bootApp()
  spaceId = await newSpace(b.app)
  S = `/v1/spaces/${spaceId}`
  obj = await newObject(b.app, spaceId)
})
afterAll(() => b.close())

const query = (body: Record<string, unknown>) => ok<{ records: Array<Record<string, any>>; total?: number; hasNext?: boolean }>(call(b.app, 'POST', `${S}/query`, body))
const modify = (body: Record<string, unknown>) => ok(call(b.app, 'POST', `${S}/modify`, body))

describe('modify and query', () => {
  it('POST {S}/modify writes one change and returns the write result; {S}/query reads it back', async () => {
    const res = await modify({
      objectId: obj,
      dataset: 'tasks',
      records: [
        { id: 't1', ops: [{ type: '$set', path: '', value: { title: 'one', n: 1, tags: ['a'] } }] },
        {
          id: 't2',
          ops: [
            { type: '$set', path: 'title', value: 'two' },
            { type: '$set', path: 'n', value: 2 },
          ],
        },
      ],
      traceIds: ['trace-1'],
    })
    expect(res).toEqual({ versionId: expect.any(String), changeId: expect.any(String), recordIds: ['t1', 't2'] })
    await modify({
      objectId: obj,
      dataset: 'tasks',
      records: [
        {
          id: 't1',
          ops: [
            { type: '$inc', path: 'n', value: 10 },
            { type: '$addToSet', path: 'tags', value: 'b' },
          ],
        },
      ],
    })
    const { records } = await query({ objectId: obj, dataset: 'tasks', sort: ['id'] })
    expect(records).toEqual([
      { id: 't1', title: 'one', n: 11, tags: ['a', 'b'], _ver: { id: expect.any(String) } },
      // t2 was last written by the change that carried traceIds: the full form names them.
      { id: 't2', title: 'two', n: 2, _ver: { id: expect.any(String) }, _traces: ['trace-1'] },
    ])
    const filtered = await query({ objectId: obj, dataset: 'tasks', filter: { tags: 'b' }, projection: { title: 1 }, includeTotal: true })
    expect(filtered).toEqual({ records: [{ id: 't1', title: 'one' }], total: 1, hasNext: false })
    // _ver.id is stamped at creation (one per change, never moved by edits): page backwards with it.
    expect(records[0]._ver.id).toBe(records[1]._ver.id)
    for (const id of ['p1', 'p2', 'p3']) await modify({ objectId: obj, dataset: 'pages', records: [{ id, ops: [{ type: '$set', path: 'v', value: id }] }] })
    await modify({ objectId: obj, dataset: 'pages', records: [{ id: 'p1', ops: [{ type: '$set', path: 'v', value: 'edited' }] }] })
    const newest = await query({ objectId: obj, dataset: 'pages', sort: ['-_ver.id'], limit: 2 })
    expect(newest.records.map((r) => r.id)).toEqual(['p3', 'p2'])
    const older = await query({ objectId: obj, dataset: 'pages', sort: ['-_ver.id'], limit: 2, filter: { '_ver.id': { $lt: newest.records[1]._ver.id } } })
    expect(older.records.map((r) => r.id)).toEqual(['p1'])
  })

  it('full form: `_traces` names the trace ids of the change that last modified a record, and goes when a later change carries none', async () => {
    const traced = await newObject(b.app, spaceId)
    const write = (value: number, traceIds?: string[]) =>
      modify({ objectId: traced, dataset: 'runs', records: [{ id: 'r', ops: [{ type: '$set', path: 'v', value }] }], ...(traceIds ? { traceIds } : {}) })
    await write(1, ['run-a', 'run-b'])
    expect((await query({ objectId: traced, dataset: 'runs' })).records).toEqual([{ id: 'r', v: 1, _ver: { id: expect.any(String) }, _traces: ['run-a', 'run-b'] }])
    await write(2, ['run-c'])
    expect((await query({ objectId: traced, dataset: 'runs' })).records[0]._traces).toEqual(['run-c'])
    // a filter can find the records a run last touched
    expect((await query({ objectId: traced, dataset: 'runs', filter: { _traces: 'run-c' } })).records.map((r) => r.id)).toEqual(['r'])
    await write(3)
    expect((await query({ objectId: traced, dataset: 'runs' })).records).toEqual([{ id: 'r', v: 3, _ver: { id: expect.any(String) } }])
  })

  it('modify: unknown top-level keys are dropped; partial success lists dropped ops in rejections', async () => {
    const res = await modify({
      objectId: obj,
      dataset: 'tasks',
      colour: 'ignored',
      records: [
        {
          id: 't3',
          ops: [
            { type: '$set', path: 'title', value: 'three' },
            { type: '$inc', path: 'title', value: 1 },
          ],
        },
      ],
    })
    expect(res.recordIds).toEqual(['t3'])
    expect(res.rejections).toEqual([{ recordId: 't3', index: 1, code: expect.any(String), reason: expect.any(String) }])
    expect((await query({ objectId: obj, dataset: 'tasks', filter: { id: 't3' } })).records[0].title).toBe('three')
  })

  it('modify and query errors', async () => {
    expectError(await call(b.app, 'POST', `${S}/modify`, { objectId: null, dataset: 'tasks', records: [] }), 400, 'object.id_required')
    expectError(await call(b.app, 'POST', `${S}/modify`, { dataset: 'tasks', records: [] }), 400, 'object.id_required')
    expectError(await call(b.app, 'POST', `${S}/modify`, { objectId: 'None', dataset: 'tasks', records: [] }), 400, 'object.id_required')
    expectError(await call(b.app, 'POST', `${S}/modify`, { objectId: 'nope', dataset: 'tasks', records: [] }), 404, 'object.not_found')
    expectError(await call(b.app, 'POST', `${S}/modify`, { objectId: obj, records: [] }), 400, 'request.missing_field')
    expectError(
      await call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'tasks', records: [{ id: 'x', ops: [{ type: '$rename', path: 'a' }] }] }),
      400,
      'request.invalid_field',
    )
    expectError(await call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'tasks', records: [{ id: 'x', ops: [], extra: 1 }] }), 400, 'request.unknown_field')
    expectError(await call(b.app, 'POST', `${S}/modify`, { objectId: 'nope', dataset: 'tasks', scope: 'local', records: [] }), 404, 'object.not_found')
    expectError(await call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'tasks', scope: 'device', records: [] }), 400, 'request.invalid_field')

    expectError(await call(b.app, 'POST', `${S}/query`, { dataset: 'tasks' }), 400, 'object.id_required')
    expectError(await call(b.app, 'POST', `${S}/query`, { objectId: null, dataset: 'tasks' }), 400, 'object.id_required')
    expectError(await call(b.app, 'POST', `${S}/query`, { objectId: 'undefined', dataset: 'tasks' }), 400, 'object.id_required')
    expectError(await call(b.app, 'POST', `${S}/query`, { objectId: obj }), 400, 'request.missing_field')
    expectError(await call(b.app, 'POST', `${S}/query`, { objectId: 'nope', dataset: 'tasks' }), 404, 'object.not_found')
    expect(expectError(await call(b.app, 'POST', `${S}/query`, { objectId: obj, dataset: 'tasks', filter: { n: { $where: 1 } } }), 400, 'filter.unknown_operator')).toEqual({
      operator: '$where',
      path: 'n',
    })
    expectError(await call(b.app, 'POST', `${S}/query`, { objectId: obj, dataset: 'tasks', filter: { n: { $gt: 1, x: 2 } } }), 400, 'filter.invalid')
    expect(expectError(await call(b.app, 'POST', `${S}/query`, { objectId: obj, dataset: 'tasks', pipeline: [] }), 400, 'request.unknown_field')).toMatchObject({
      fields: ['pipeline'],
      accepted: ['objectId', 'dataset', 'filter', 'sort', 'limit', 'offset', 'includeTotal', 'projection'],
    })
    expectError(await call(b.app, 'POST', `${S}/query/subscribe`, { objectId: null, dataset: 'tasks' }), 400, 'object.id_required')
    expectError(await call(b.app, 'POST', `${S}/query/subscribe`, { objectId: 'nope', dataset: 'tasks' }), 404, 'object.not_found')
    expectError(await call(b.app, 'POST', `${S}/query/subscribe`, { objectId: obj, dataset: 'tasks', driftBudgetPercent: 101 }), 400, 'request.invalid_field')
  })

  it('POST {S}/delete-records tombstones records (write result)', async () => {
    await modify({
      objectId: obj,
      dataset: 'gone',
      records: [
        { id: 'a', ops: [{ type: '$set', path: 'v', value: 1 }] },
        { id: 'b', ops: [{ type: '$set', path: 'v', value: 2 }] },
      ],
    })
    const res = await ok(call(b.app, 'POST', `${S}/delete-records`, { objectId: obj, dataset: 'gone', recordIds: ['a'] }))
    expect(res).toEqual({ versionId: expect.any(String), changeId: expect.any(String), recordIds: ['a'] })
    expect((await query({ objectId: obj, dataset: 'gone' })).records.map((r) => r.id)).toEqual(['b'])
    expectError(await call(b.app, 'POST', `${S}/delete-records`, { objectId: null, dataset: 'gone', recordIds: ['b'] }), 400, 'object.id_required')
    expectError(await call(b.app, 'POST', `${S}/delete-records`, { objectId: 'nope', dataset: 'gone', recordIds: ['b'] }), 404, 'object.not_found')
    expectError(await call(b.app, 'POST', `${S}/delete-records`, { objectId: obj, dataset: 'gone', recordIds: [] }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', `${S}/delete-records`, { objectId: obj, dataset: 'gone', recordIds: ['b'], force: true }), 400, 'request.unknown_field')
  })
})

describe('upsert', () => {
  let typeId: string
  let item: string
  let collection: string
  beforeAll(async () => {
    typeId = (await ok(call(b.app, 'POST', `${S}/types`, { xKey: 'catalog' }), 201)).id
    const part = await ok(
      call(b.app, 'POST', `${S}/types/${typeId}/parts`, {
        key: 'items',
        datasets: [
          { idRule: 'user', idPattern: '[a-z0-9-]+', idMaxLen: 16, fields: { title: { type: 'string', mutableBy: 'any', required: true }, sku: { type: 'string' } } },
          { key: 'auto', fields: { x: {} } },
        ],
      }),
      201,
    )
    collection = part.datasets[0].collection
    item = await newObject(b.app, spaceId, { types: [typeId] })
  })

  it('creates, updates changed fields, skips identical records, pages by pageSize', async () => {
    const r1 = await ok(
      call(b.app, 'POST', `${S}/upsert`, {
        objectId: item,
        dataset: collection,
        records: [
          { id: 'a', fields: { title: 'A', sku: 's1' } },
          { id: 'b', fields: { title: 'B' } },
          { id: 'c', fields: { title: 'C' } },
        ],
        pageSize: 2,
      }),
    )
    expect(r1).toMatchObject({ created: 3, updated: 0, skipped: 0, rejections: [] })
    expect(r1.pages.map((p: { recordIds: string[] }) => p.recordIds)).toEqual([['a', 'b'], ['c']])
    const r2 = await ok(
      call(b.app, 'POST', `${S}/upsert`, {
        objectId: item,
        dataset: collection,
        records: [
          { id: 'a', fields: { title: 'A2' } },
          { id: 'b', fields: { title: 'B' } },
        ],
      }),
    )
    expect(r2).toMatchObject({ created: 0, updated: 1, skipped: 1, rejections: [] })
    expect((await query({ objectId: item, dataset: collection, filter: { id: 'a' } })).records[0]).toMatchObject({ title: 'A2', sku: 's1' })
  })

  it('per-record rejections are 200 entries: immutable field, deleted record, screening', async () => {
    await ok(
      call(b.app, 'POST', `${S}/upsert`, {
        objectId: item,
        dataset: collection,
        records: [
          { id: 'r1', fields: { title: 'x', sku: 'one' } },
          { id: 'r2', fields: { title: 'y' } },
        ],
      }),
    )
    await ok(call(b.app, 'POST', `${S}/delete-records`, { objectId: item, dataset: collection, recordIds: ['r2'] }))
    const r = await ok(
      call(b.app, 'POST', `${S}/upsert`, {
        objectId: item,
        dataset: collection,
        records: [
          { id: 'r1', fields: { sku: 'two' } },
          { id: 'r2', fields: { title: 'back' } },
          { id: 'r3', fields: { title: 't', extra: 1 } },
          { id: 'Bad_Id', fields: { title: 't' } },
          { id: 'r5', fields: { sku: 'no title' } },
          { id: 'waytoolongforthisdataset', fields: { title: 't' } },
        ],
      }),
    )
    expect(r.rejections.map((x: { index: number; code: string }) => [x.index, x.code])).toEqual([
      [0, 'upsert.immutable_field'],
      [1, 'upsert.record_deleted'],
      [2, 'upsert.rejected'],
      [3, 'upsert.rejected'],
      [4, 'upsert.rejected'],
      [5, 'upsert.rejected'],
    ])
    expect(r).toMatchObject({ created: 0, updated: 0, pages: [] })
  })

  it('request errors: object.id_required, object.not_found, dataset.unknown, upsert.requires_user_ids, dataset.not_declared', async () => {
    const up = (body: Record<string, unknown>) => call(b.app, 'POST', `${S}/upsert`, { records: [], ...body })
    expectError(await up({ dataset: collection }), 400, 'object.id_required')
    expectError(await up({ objectId: null, dataset: collection }), 400, 'object.id_required')
    expectError(await up({ objectId: 'nope', dataset: collection }), 404, 'object.not_found')
    expectError(await up({ objectId: item, dataset: 'nobody_declares' }), 400, 'dataset.unknown')
    expectError(await up({ objectId: item, dataset: `${typeId}_auto` }), 400, 'upsert.requires_user_ids')
    expectError(await up({ objectId: obj, dataset: collection }), 400, 'dataset.not_declared')
    expectError(await up({ objectId: item, dataset: collection, pageSize: 0 }), 400, 'request.invalid_field')
    expectError(await up({ objectId: item, dataset: collection, colour: 1 }), 400, 'request.unknown_field')
  })
})
