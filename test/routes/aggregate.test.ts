import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, ok, type Booted } from './helpers.ts'

let b: Booted
let S: string
let obj: string
beforeAll(async () => {
  b = await bootApp()
  S = `/v1/spaces/${(await ok(call(b.app, 'POST', '/v1/spaces', { name: 'Agg' }), 201)).id}`
  obj = (await ok(call(b.app, 'POST', `${S}/objects`, { initialProperties: { core: { name: 'ledger' } } }), 201)).objectId
  for (const [i, cat, amount] of [
    [1, 'a', 5],
    [2, 'b', 7],
    [3, 'a', 1],
  ] as const) {
    await ok(call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'rows', records: [{ id: `r${i}`, ops: [{ type: '$set', path: '', value: { cat, amount } }] }] }))
  }
})
afterAll(async () => b.close())

describe('aggregate routes', () => {
  it('groups a dataset, explains, drops unknown top-level keys', async () => {
    const pipeline = [{ $group: { _id: '$cat', n: { $sum: 1 }, total: { $sum: '$amount' } } }, { $sort: { _id: 1 } }]
    const r = await ok(call(b.app, 'POST', `${S}/aggregate`, { objectId: obj, dataset: 'rows', pipeline, ignored: true }))
    expect(r).toEqual({
      records: [
        { _id: 'a', n: 2, total: 6 },
        { _id: 'b', n: 1, total: 7 },
      ],
    })
    const plan = await ok(call(b.app, 'POST', `${S}/aggregate`, { objectId: obj, dataset: 'rows', pipeline, explain: true }))
    expect(plan.plan.stages).toHaveLength(2)
    const objs = await ok(call(b.app, 'POST', `${S}/objects/aggregate`, { pipeline: [{ $match: { 'core.name': 'ledger' } }, { $count: 'n' }] }))
    expect(objs).toEqual({ records: [{ n: 1 }] })
  })

  it('400 aggregate.bad_pipeline and aggregate.limit_exceeded with details.limit; 404 for an unknown object', async () => {
    expectError(await call(b.app, 'POST', `${S}/objects/aggregate`, { pipeline: [{ $explode: {} }] }), 400, 'aggregate.bad_pipeline')
    expectError(await call(b.app, 'POST', `${S}/objects/aggregate`, { pipeline: 'nope' }), 400, 'aggregate.bad_pipeline')
    const lim = await call(b.app, 'POST', `${S}/aggregate`, { objectId: obj, dataset: 'rows', pipeline: [{ $group: { _id: '$cat' } }], groupLimit: 1 })
    expectError(lim, 400, 'aggregate.limit_exceeded')
    expect(lim.json().error.details.limit).toBe('group')
    expectError(await call(b.app, 'POST', `${S}/aggregate`, { objectId: 'nope', dataset: 'rows', pipeline: [] }), 404, 'object.not_found')
  })
})
