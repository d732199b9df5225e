import { describe, expect, it } from 'vitest'
import { parseSnapshotBody, parseSubscribeBody, runQuery } from '../../sync/query/index.ts'
import { expectSvcError, ids, rec } from './helpers.ts'

// Shapes (unknown keys, types, ranges) are the request schema's: test/routes/query-body.test.ts.
describe('query body meaning', () => {
  it('returns typed values and a compiled query', () => {
    const b = parseSnapshotBody({ objectId: 'o1', dataset: 'ds', filter: { n: { $gt: 1 } }, sort: ['-n'], limit: 2, offset: 1, includeTotal: true, projection: { n: 1 } })
    expect(b).toMatchObject({ objectId: 'o1', dataset: 'ds', filter: { n: { $gt: 1 } }, sort: ['-n'], limit: 2, offset: 1, includeTotal: true, projection: { n: 1 } })
    const docs = [1, 2, 3, 4].map((n) => rec(n, { n }))
    expect(runQuery(docs, b.query)).toEqual({
      records: [
        { id: 'r003', n: 3 },
        { id: 'r002', n: 2 },
      ],
      total: 3,
      hasNext: false,
    })
    const e = parseSnapshotBody({})
    expect([e.offset, e.includeTotal, e.limit, e.filter]).toEqual([0, false, undefined, undefined])
  })

  it('subscribe adds mailboxCapacity and driftBudgetPercent with the spec defaults', () => {
    expect(parseSubscribeBody({ limit: 5 })).toMatchObject({ mailboxCapacity: 256, driftBudgetPercent: 30, limit: 5 })
    expect(parseSubscribeBody({ mailboxCapacity: 16, driftBudgetPercent: 12.5 })).toMatchObject({ mailboxCapacity: 16, driftBudgetPercent: 12.5 })
  })

  it('per-object endpoints need an objectId; a serialized nil is object.id_required', () => {
    for (const objectId of [undefined, null, 'None', 'null', 'undefined', '']) {
      expectSvcError(() => parseSnapshotBody(objectId === undefined ? {} : { objectId }, { perObject: true }), 'object.id_required')
    }
    expectSvcError(() => parseSubscribeBody({ objectId: 'None' }), 'object.id_required')
    expect(parseSnapshotBody({ objectId: 'obj' }, { perObject: true }).objectId).toBe('obj')
    expect(parseSnapshotBody({ objectId: null }).objectId).toBeUndefined()
  })

  it('what only the query engine can judge is request.invalid_field or filter.*', () => {
    expectSvcError(() => parseSnapshotBody({ projection: { a: 1, b: 0 } }), 'request.invalid_field', { field: 'projection' })
    expectSvcError(() => parseSnapshotBody({ filter: { a: { $regex: 'x' } } }), 'filter.unknown_operator', { operator: '$regex', path: 'a' })
    expectSvcError(() => parseSubscribeBody({ filter: { a: { $in: 'x' } } }), 'filter.invalid')
  })

  it('missing dataset where required', () => {
    expectSvcError(() => parseSnapshotBody({}, { requireDataset: true }), 'request.missing_field', { field: 'dataset' })
    expectSvcError(() => parseSnapshotBody({ dataset: null }, { requireDataset: true }), 'request.missing_field', { field: 'dataset' })
  })

  it('explicit null on optional fields means absent', () => {
    const b = parseSubscribeBody({
      filter: null,
      sort: null,
      limit: null,
      offset: null,
      includeTotal: null,
      projection: null,
      dataset: null,
      mailboxCapacity: null,
      driftBudgetPercent: null,
    })
    expect(b).toMatchObject({ offset: 0, includeTotal: false, mailboxCapacity: 256, driftBudgetPercent: 30 })
    expect(ids(runQuery([rec(2), rec(1)], b.query).records)).toEqual(['r001', 'r002'])
  })
})
