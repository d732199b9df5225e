import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_MAILBOX_CAPACITY, MAX_QUERY_LIMIT, MIN_MAILBOX_CAPACITY } from '../../sync/core/limits.ts'
import { bootApp, call, expectError, newObject, newSpace, ok, type Booted } from './helpers.ts'

// The request schemas own the query bodies' shape (sync/query/body.ts keeps only meaning):
// every shape fault is answered before a route runs, with the field it names.
let b: Booted
let S: string
let obj: string
beforeAll(async () => {
  b = await bootApp()
  const spaceId = await newSpace(b.app, 'Bodies')
  S = `/v1/spaces/${spaceId}`
  obj = await newObject(b.app, spaceId)
})
afterAll(async () => b.close())

describe('query body shapes', () => {
  it('unknown keys are request.unknown_field with fields and the accepted ones', async () => {
    expect(expectError(await call(b.app, 'POST', `${S}/objects/query`, { limit: 1, bogus: 1, other: 2 }), 400, 'request.unknown_field')).toEqual({
      fields: ['bogus', 'other'],
      accepted: ['filter', 'sort', 'limit', 'offset', 'includeTotal', 'projection'],
    })
    expect(expectError(await call(b.app, 'POST', `${S}/objects/query`, { mailboxCapacity: 64 }), 400, 'request.unknown_field')).toMatchObject({ fields: ['mailboxCapacity'] })
    expect(expectError(await call(b.app, 'POST', `${S}/query/subscribe`, { objectId: obj, dataset: 'd', cursor: 'x' }), 400, 'request.unknown_field')).toMatchObject({
      fields: ['cursor'],
      accepted: expect.arrayContaining(['objectId', 'dataset', 'mailboxCapacity', 'driftBudgetPercent']),
    })
  })

  it('wrong types and ranges are request.invalid_field naming the field, on snapshot and subscribe routes', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ dataset: 5 }, 'dataset'],
      [{ dataset: '' }, 'dataset'],
      [{ objectId: 5 }, 'objectId'],
      [{ filter: 'x' }, 'filter'],
      [{ filter: [] }, 'filter'],
      [{ sort: 'n' }, 'sort'],
      [{ sort: [1] }, 'sort.0'],
      [{ limit: '5' }, 'limit'],
      [{ limit: -1 }, 'limit'],
      [{ limit: 0.5 }, 'limit'],
      [{ limit: MAX_QUERY_LIMIT + 1 }, 'limit'],
      [{ offset: '1' }, 'offset'],
      [{ offset: -3 }, 'offset'],
      [{ includeTotal: 'true' }, 'includeTotal'],
      [{ projection: ['a'] }, 'projection'],
    ]
    for (const [body, field] of cases) {
      const details = expectError(await call(b.app, 'POST', `${S}/query`, { objectId: obj, dataset: 'd', ...body }), 400, 'request.invalid_field')
      expect([body, details]).toEqual([body, { field }])
    }
    const subscribe: Array<[Record<string, unknown>, string]> = [
      [{ mailboxCapacity: MIN_MAILBOX_CAPACITY - 1 }, 'mailboxCapacity'],
      [{ mailboxCapacity: MAX_MAILBOX_CAPACITY + 1 }, 'mailboxCapacity'],
      [{ mailboxCapacity: '64' }, 'mailboxCapacity'],
      [{ driftBudgetPercent: 'x' }, 'driftBudgetPercent'],
      [{ driftBudgetPercent: 200 }, 'driftBudgetPercent'],
    ]
    for (const [body, field] of subscribe) {
      const details = expectError(await call(b.app, 'POST', `${S}/objects/query/subscribe`, body), 400, 'request.invalid_field')
      expect([body, details]).toEqual([body, { field }])
    }
  })

  it('a body that is not an object is request.bad_json; null fields are absent', async () => {
    expectError(await call(b.app, 'POST', `${S}/objects/query`, []), 400, 'request.bad_json')
    const res = await ok(call(b.app, 'POST', `${S}/objects/query`, { filter: null, sort: null, limit: null, offset: null, includeTotal: null, projection: null }))
    expect(res.records.map((r: { id: string }) => r.id)).toContain(obj)
  })
})
