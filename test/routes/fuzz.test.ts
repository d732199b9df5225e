import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, newObject, newSpace, ok, type Booted } from './helpers.ts'
import { routesFrom, type Route } from './fuzz-openapi.ts'
import { badRequests } from './fuzz-requests.ts'
import { sendAll } from './fuzz-send.ts'
import { writeBodies } from './fuzz-write-bodies.ts'

/**
 * Fuzzing the HTTP surface.
 *
 * 1. "bad requests across every route": the routes come from `GET /v1/openapi.json` of the booted
 *    app (so a new route is covered without touching this file). For each route we generate
 *    requests that are invalid by construction: wrong types (a JSON type the schema does not
 *    allow, coercion is off), unknown keys (strict routes), top-level non-objects, huge bodies
 *    (> 1 MB), deep nesting (up to 100k levels), bad path ids (percent junk, invalid UTF-8
 *    escapes, very long, unicode), bad filters (unknown operators, wrong shapes, depth), bad
 *    JSON, wrong content types and wrong methods. Only read-only POST query routes (not their
 *    subscribe twins, which would stream) and plain GETs also get half-good bodies that may be
 *    valid. Every answer is 2xx or the error envelope, never a 5xx, never a hang, and the
 *    account's data (tech space and every held space's state digest, plus the spaces list) is
 *    byte-for-byte the same afterwards.
 * 2. "generated requests": bad and half-good bodies against the write routes, which do write
 *    (regression for local writes that made malformed changes: op paths like `a..b` or
 *    `__proto__`, setting keys with dots, which answered 500). Runs after 1.
 */
let b: Booted
let routes: Array<['GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', string]>
let obj: string
let typeId: string
let sid: string
beforeAll(async () => {
  b = await bootApp()
  sid = await newSpace(b.app)
  const S = `/v1/spaces/${sid}`
  obj = await newObject(b.app, sid)
  typeId = (await ok(call(b.app, 'POST', `${S}/types`, { xKey: 'fz' }), 201)).id
  await ok(call(b.app, 'POST', `${S}/types/${typeId}/parts`, { key: 'items', datasets: [{ idRule: 'user', dynamic: true, fields: {} }] }), 201)
  await ok(call(b.app, 'POST', `${S}/types/${typeId}/properties`, { name: 'n', kind: 'number' }), 201)
  await ok(call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'd', records: [{ id: 'r1', ops: [{ type: '$set', path: 'a', value: 1 }] }] }))
  const T = `${S}/types/${typeId}`
  routes = [
    ['POST', '/v1/spaces'],
    ['PUT', '/v1/account/metadata'],
    ['POST', '/v1/spaces/query'],
    ['PATCH', S],
    ['PATCH', `${S}/settings`],
    ['POST', `${S}/types`],
    ['PATCH', T],
    ['POST', `${T}/properties`],
    ['POST', `${T}/parts`],
    ['POST', `${S}/objects`],
    ['POST', `${S}/objects/query`],
    ['POST', `${S}/query`],
    ['POST', `${S}/modify`],
    ['POST', `${S}/upsert`],
    ['POST', `${S}/delete-records`],
    ['POST', `${S}/properties/${obj}/set/core`],
    ['POST', `${S}/properties/${obj}/set/${typeId}`],
    ['PATCH', `${T}/properties/x`],
    ['POST', `${T}/parts/x/datasets`],
    ['PATCH', `${T}/datasets/x`],
    ['GET', `${S}/objects/%00/backlinks`],
    ['GET', '/v1/identities/%20'],
    ['POST', '/v1/spaces/derived/%2F'],
  ]
}, 60_000)
afterAll(() => b?.close())

// ------------------------------------------------------------------ 1. bad requests, every route

describe('bad requests across every route (from the OpenAPI document)', () => {
  it('5,000+ invalid requests: envelope or 2xx, no 5xx, no hang, data unchanged', async () => {
    const doc = await b.app.inject({ method: 'GET', url: '/v1/openapi.json' })
    expect(doc.statusCode).toBe(200)
    const all = routesFrom(doc.json())
    expect(all.length).toBeGreaterThan(40)
    const identity = ((await ok(call(b.app, 'GET', '/v1/identities'))).identities?.[0]?.identity as string | undefined) ?? 'x'
    const real: Record<string, string> = { spaceId: sid, objectId: obj, typeId, typeKey: 'core', identity, name: 'x', propId: 'x', partId: 'x', datasetDefId: 'x', deviceId: 'x' }
    const fill = (r: Route, bad?: [string, string]) => r.template.replace(/\{([^}]+)\}/g, (_, p: string) => (bad && bad[0] === p ? bad[1] : encodeURIComponent(real[p] ?? 'x')))
    const reqs = badRequests(all, fill, obj)
    expect(reqs.length).toBeGreaterThanOrEqual(5_000)

    // ---- the account's data before
    const digest = async () => {
      const account = b.engine.account()
      const spaces = await account.listSpaces('all')
      const held = await Promise.all(account.openSpaces().map(async (s) => [s.spaceId, await s.replica.stateDigest()] as const))
      held.sort((x, y) => (x[0] < y[0] ? -1 : 1))
      return JSON.stringify({ accountId: account.accountId, tech: await account.tech.replica.stateDigest(), spaces, held })
    }
    const before = await digest()

    // ---- send
    const { failures, notImplemented, accepted, byKind } = await sendAll(b.app, reqs)
    await Promise.all(
      b.engine
        .account()
        .openSpaces()
        .map((s) => s.settled()),
    )
    const after = await digest()

    const summary = Object.fromEntries([...byKind].map(([k, m]) => [k, Object.fromEntries(m)]))
    if (failures.length > 0 || process.env.FUZZ_VERBOSE)
      console.log(JSON.stringify({ sent: reqs.length, routes: all.length, summary, notImplemented: [...notImplemented], accepted }, null, 1))
    expect(failures.slice(0, 30)).toEqual([])
    expect(after).toEqual(before)
  }, 240_000)
})

// ------------------------------------------------------------------ 2. half-good bodies on the write routes

describe('generated requests', () => {
  it('never answer 5xx; errors carry the envelope', async () => {
    const body = writeBodies(obj, typeId)
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
    const res = await ok(
      call(b.app, 'POST', `${S}/modify`, {
        objectId: obj,
        dataset: 'd',
        records: [
          {
            id: 'r',
            ops: [
              { type: '$set', path: 'a..b', value: 1 },
              { type: '$set', path: 'ok', value: 1 },
            ],
          },
        ],
      }),
    )
    expect(res.rejections).toEqual([{ recordId: 'r', index: 0, code: 'dataset.validation', reason: 'path' }])
    const many = Array.from({ length: 10_001 }, (_, i) => ({ type: '$unset', path: `p${i}` }))
    const tooMany = await call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'd', records: [{ id: 'r', ops: many }] })
    expect(tooMany.statusCode).toBe(400)
    expect(tooMany.json().error.code).toBe('request.invalid_field')
    const settings = await call(b.app, 'PATCH', `${S}/settings`, { set: { 'a.b': 1 } })
    expect(settings.json()).toMatchObject({ error: { code: 'request.invalid_field', details: { field: 'a.b' } } })
  })
})
