import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, newObject, newSpace, ok, type Booted } from './helpers.ts'

/**
 * Generated bad and half-good bodies against the routes of this area: every answer is 2xx or
 * the error envelope, never a 5xx. (Regression for local writes that made malformed changes:
 * op paths like `a..b` or `__proto__`, setting keys with dots, which answered 500.)
 */
let b: Booted
let routes: Array<['GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', string]>
let obj: string
let typeId: string
beforeAll(async () => {
  b = await bootApp()
  const sid = await newSpace(b.app)
  const S = `/v1/spaces/${sid}`
  obj = await newObject(b.app, sid)
  typeId = (await ok(call(b.app, 'POST', `${S}/types`, { xKey: 'fz' }), 201)).id
  await ok(call(b.app, 'POST', `${S}/types/${typeId}/parts`, { key: 'items', datasets: [{ idRule: 'user', dynamic: true, fields: {} }] }), 201)
  await ok(call(b.app, 'POST', `${S}/types/${typeId}/properties`, { name: 'n', kind: 'number' }), 201)
  const T = `${S}/types/${typeId}`
  routes = [
    ['POST', '/v1/spaces'], ['PUT', '/v1/account/metadata'], ['POST', '/v1/spaces/query'], ['PATCH', S], ['PATCH', `${S}/settings`],
    ['POST', `${S}/types`], ['PATCH', T], ['POST', `${T}/properties`], ['POST', `${T}/parts`], ['POST', `${S}/objects`],
    ['POST', `${S}/objects/query`], ['POST', `${S}/query`], ['POST', `${S}/modify`], ['POST', `${S}/upsert`], ['POST', `${S}/delete-records`],
    ['POST', `${S}/properties/${obj}/set/core`], ['POST', `${S}/properties/${obj}/set/${typeId}`], ['PATCH', `${T}/properties/x`],
    ['POST', `${T}/parts/x/datasets`], ['PATCH', `${T}/datasets/x`], ['GET', `${S}/objects/%00/backlinks`], ['GET', '/v1/identities/%20'],
    ['POST', '/v1/spaces/derived/%2F'],
  ]
})
afterAll(() => b.close())

describe('generated requests', () => {
  it('never answer 5xx; errors carry the envelope', async () => {
    const keys = fc.constantFrom('objectId', 'dataset', 'filter', 'sort', 'limit', 'offset', 'projection', 'records', 'name', 'set', 'unset', 'types', 'initialProperties', 'xKey', 'kind', 'key', 'datasets', 'recordIds', 'pageSize', 'meta', 'xFormat', 'fields', 'idRule', 'module', 'core', 'ops', 'includeTotal', 'scope', 'traceIds', 'constructor', '$where')
    const val = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string(),
        fc.constantFrom(obj, typeId, 'svc://x', '$gt', '', 'None'),
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(fc.oneof(keys, fc.string()), tie('v'), { maxKeys: 4 }),
      ),
    })).v
    const path = fc.oneof(fc.constantFrom('', 'a', 'a.b', 'a.0', '.', 'a..b', '__proto__', 'a.__proto__.b', '$x', 'core.name', '_ver.id', 'id'), fc.string({ maxLength: 6 }))
    const op = fc.record({ type: fc.constantFrom('$set', '$unset', '$inc', '$addToSet', '$pull'), path, value: val }, { requiredKeys: ['type', 'path'] })
    const filter = fc.dictionary(
      fc.oneof(path, fc.constantFrom('$and', '$or', '$nor', '$text', '$not')),
      fc.oneof(val, fc.dictionary(fc.constantFrom('$eq', '$ne', '$gt', '$in', '$nin', '$exists', '$text', '$size', '$all', '$elemMatch', '$not', '$date', '$regex'), val, { maxKeys: 2 })),
      { maxKeys: 3 },
    )
    const body = fc.oneof(
      fc.dictionary(keys, val, { maxKeys: 5 }),
      fc.record({ objectId: fc.constantFrom(obj, 'x'), dataset: fc.constantFrom('d', 'e'), records: fc.array(fc.record({ id: fc.string({ minLength: 1, maxLength: 5 }), ops: fc.array(op, { maxLength: 3 }) }), { maxLength: 3 }) }),
      fc.record({ objectId: fc.constant(obj), dataset: fc.constant('d'), filter, sort: fc.array(path, { maxLength: 2 }), limit: fc.integer({ min: 0, max: 20 }), projection: fc.dictionary(path, fc.constantFrom(0, 1, true)) }, { requiredKeys: [] }),
      fc.record({ objectId: fc.constant(obj), dataset: fc.constant(`${typeId}_items`), records: fc.array(fc.record({ id: val, fields: val }), { maxLength: 3 }) }),
      fc.record({ types: fc.array(fc.constantFrom(typeId, 'core', 'page', 'x'), { maxLength: 2 }), initialProperties: fc.dictionary(fc.constantFrom('core', typeId, 'x'), fc.dictionary(fc.constantFrom('name', 'tags', 'description', 'icon', 'x'), val)) }, { requiredKeys: [] }),
      fc.record({ set: fc.dictionary(path, val, { maxKeys: 3 }), unset: fc.array(path, { maxLength: 2 }) }, { requiredKeys: [] }),
      fc.record({ key: fc.constantFrom('items', 'k', '1x'), datasets: fc.array(fc.dictionary(fc.constantFrom('key', 'module', 'shared', 'idRule', 'idPattern', 'idMaxLen', 'fields', 'dynamic'), val, { maxKeys: 4 }), { maxLength: 2 }) }, { requiredKeys: [] }),
    )
    const bad: string[] = []
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), body, async ([method, url], payload) => {
        const res = await b.app.inject({ method, url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } })
        if (res.statusCode >= 500) bad.push(`${method} ${url} ${JSON.stringify(payload)} -> ${res.body}`)
        if (res.statusCode >= 400) expect(typeof res.json().error.code).toBe('string')
      }),
      { numRuns: 1500, seed: 7 },
    )
    expect(bad).toEqual([])
  })

  it('modify drops ops with unstorable paths (rejections) instead of failing; too many ops is 400', async () => {
    const S = routes[3][1]
    const res = await ok(call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'd', records: [{ id: 'r', ops: [{ type: '$set', path: 'a..b', value: 1 }, { type: '$set', path: 'ok', value: 1 }] }] }))
    expect(res.rejections).toEqual([{ recordId: 'r', index: 0, code: 'dataset.validation', reason: 'path' }])
    const many = Array.from({ length: 10_001 }, (_, i) => ({ type: '$unset', path: `p${i}` }))
    const tooMany = await call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'd', records: [{ id: 'r', ops: many }] })
    expect(tooMany.statusCode).toBe(400)
    expect(tooMany.json().error.code).toBe('request.invalid_field')
    const settings = await call(b.app, 'PATCH', `${S}/settings`, { set: { 'a.b': 1 } })
    expect(settings.json()).toMatchObject({ error: { code: 'request.invalid_field', details: { field: 'a.b' } } })
  })
})
