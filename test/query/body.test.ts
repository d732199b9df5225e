import { describe, expect, it } from 'vitest'
import { parseSnapshotBody, parseSubscribeBody, runQuery, SNAPSHOT_FIELDS, SUBSCRIBE_FIELDS } from '../../sync/query/index.ts'
import { expectSvcError, ids, rec } from './helpers.ts'

describe('query body validation', () => {
  it('returns typed values and a compiled query', () => {
    const b = parseSnapshotBody({ objectId: 'o1', dataset: 'ds', filter: { n: { $gt: 1 } }, sort: ['-n'], limit: 2, offset: 1, includeTotal: true, projection: { n: 1 } })
    expect(b).toMatchObject({ objectId: 'o1', dataset: 'ds', filter: { n: { $gt: 1 } }, sort: ['-n'], limit: 2, offset: 1, includeTotal: true, projection: { n: 1 } })
    const docs = [1, 2, 3, 4].map((n) => rec(n, { n }))
    expect(runQuery(docs, b.query)).toEqual({ records: [{ id: 'r003', n: 3 }, { id: 'r002', n: 2 }], total: 3, hasNext: false })
    const e = parseSnapshotBody({})
    expect([e.offset, e.includeTotal, e.limit, e.filter]).toEqual([0, false, undefined, undefined])
  })

  it('subscribe adds mailboxCapacity and driftBudgetPercent with the spec defaults', () => {
    expect(parseSubscribeBody({ limit: 5 })).toMatchObject({ mailboxCapacity: 256, driftBudgetPercent: 30, limit: 5 })
    expect(parseSubscribeBody({ mailboxCapacity: 16, driftBudgetPercent: 12.5 })).toMatchObject({ mailboxCapacity: 16, driftBudgetPercent: 12.5 })
    expectSvcError(() => parseSubscribeBody({ mailboxCapacity: 15 }), 'request.invalid_field', { field: 'mailboxCapacity' })
    expectSvcError(() => parseSubscribeBody({ mailboxCapacity: '64' }), 'request.invalid_field', { field: 'mailboxCapacity' })
    expectSvcError(() => parseSubscribeBody({ driftBudgetPercent: 'x' }), 'request.invalid_field', { field: 'driftBudgetPercent' })
    expectSvcError(() => parseSubscribeBody({ driftBudgetPercent: 200 }), 'request.invalid_field', { field: 'driftBudgetPercent' })
  })

  it('unknown keys are request.unknown_field with fields and accepted', () => {
    expectSvcError(() => parseSnapshotBody({ limit: 1, bogus: 1, other: 2 }), 'request.unknown_field', { fields: ['bogus', 'other'], accepted: [...SNAPSHOT_FIELDS] })
    expectSvcError(() => parseSnapshotBody({ mailboxCapacity: 64 }), 'request.unknown_field', { fields: ['mailboxCapacity'] })
    expectSvcError(() => parseSubscribeBody({ cursor: 'x' }), 'request.unknown_field', { fields: ['cursor'], accepted: [...SUBSCRIBE_FIELDS] })
  })

  it('per-object endpoints need an objectId; a serialized nil is object.id_required', () => {
    for (const objectId of [undefined, null, 'None', 'null', 'undefined', '']) {
      expectSvcError(() => parseSnapshotBody(objectId === undefined ? {} : { objectId }, { perObject: true }), 'object.id_required')
    }
    expectSvcError(() => parseSubscribeBody({ objectId: 'None' }), 'object.id_required')
    expect(parseSnapshotBody({ objectId: 'obj' }, { perObject: true }).objectId).toBe('obj')
    expect(parseSnapshotBody({ objectId: null }).objectId).toBeUndefined()
    expectSvcError(() => parseSnapshotBody({ objectId: 5 }, { perObject: true }), 'request.invalid_field', { field: 'objectId' })
  })

  it('wrong types are request.invalid_field naming the field', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ dataset: 5 }, 'dataset'],
      [{ dataset: '' }, 'dataset'],
      [{ filter: 'x' }, 'filter'],
      [{ filter: [] }, 'filter'],
      [{ sort: 'n' }, 'sort'],
      [{ sort: [1] }, 'sort'],
      [{ limit: '5' }, 'limit'],
      [{ limit: -1 }, 'limit'],
      [{ limit: 0.5 }, 'limit'],
      [{ limit: 10_001 }, 'limit'],
      [{ offset: '1' }, 'offset'],
      [{ offset: -3 }, 'offset'],
      [{ includeTotal: 'true' }, 'includeTotal'],
      [{ projection: ['a'] }, 'projection'],
      [{ projection: { a: 1, b: 0 } }, 'projection'],
    ]
    for (const [body, field] of cases) expectSvcError(() => parseSnapshotBody(body), 'request.invalid_field', { field })
  })

  it('missing dataset where required, non-object bodies, filter errors', () => {
    expectSvcError(() => parseSnapshotBody({}, { requireDataset: true }), 'request.missing_field', { field: 'dataset' })
    expectSvcError(() => parseSnapshotBody([]), 'request.schema')
    expectSvcError(() => parseSnapshotBody(null), 'request.schema')
    expectSvcError(() => parseSnapshotBody({ filter: { a: { $regex: 'x' } } }), 'filter.unknown_operator', { operator: '$regex', path: 'a' })
    expectSvcError(() => parseSubscribeBody({ filter: { a: { $in: 'x' } } }), 'filter.invalid')
  })

  it('explicit null on optional fields means absent', () => {
    const b = parseSubscribeBody({ filter: null, sort: null, limit: null, offset: null, includeTotal: null, projection: null, dataset: null, mailboxCapacity: null, driftBudgetPercent: null })
    expect(b).toMatchObject({ offset: 0, includeTotal: false, mailboxCapacity: 256, driftBudgetPercent: 30 })
    expect(ids(runQuery([rec(2), rec(1)], b.query).records)).toEqual(['r001', 'r002'])
  })
})
