import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { type ErrorCode, SvcError } from '../../sync/core/errors.ts'
import { cleanup, expectError, makeApp, post } from './helpers.ts'

afterEach(cleanup)

const Strict = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    count: Type.Optional(Type.Integer({ minimum: 0 })),
    nested: Type.Optional(Type.Object({ a: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
)

/** Routes that exercise the platform's validation and error mapping. */
async function testRoutes(app: FastifyInstance) {
  const config = { public: true }
  app.post('/test/strict', { config, schema: { body: Strict } }, async (req) => req.body)
  app.post('/test/drop', { config: { ...config, unknownKeys: 'drop' }, schema: { body: Type.Object({ name: Type.String() }) } }, async (req) => req.body)
  app.put(
    '/test/at-least-one',
    { config, schema: { body: Type.Object({ a: Type.Optional(Type.String()), b: Type.Optional(Type.String()) }, { minProperties: 1, additionalProperties: false }) } },
    async (_req, reply) => reply.code(204).send(),
  )
  app.get(
    '/test/query',
    {
      config,
      schema: {
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ maximum: 200 })), on: Type.Optional(Type.Boolean()), ids: Type.Optional(Type.Array(Type.Integer())) }),
      },
    },
    async (req) => req.query,
  )
  app.get('/test/items/:id', { config, schema: { params: Type.Object({ id: Type.String({ pattern: '^[a-z]+$' }) }) } }, async (req) => req.params)
  app.get('/test/boom', { config }, async () => {
    throw new Error('EACCES: /home/someone/.local/share/svc/accounts/x/wallet.json')
  })
  app.get('/test/unmapped', { config }, async () => {
    // Typed code cannot do this; a cast (or an error object from elsewhere) still must not leak.
    throw new SvcError('made.up' as ErrorCode, 'a code outside the union')
  })
  app.get('/test/gated', async () => ({ ok: true }))
}

const make = () => makeApp({ app: { routes: [testRoutes] } }).app

describe('strict bodies', () => {
  it('400 request.unknown_field lists every unknown key and the accepted ones', async () => {
    const details = expectError(await post(make(), '/test/strict', { name: 'x', zeta: 1, alpha: 2 }), 400, 'request.unknown_field')
    expect(details).toEqual({ fields: ['zeta', 'alpha'], accepted: ['name', 'count', 'nested'] })
  })

  it('unknown keys in a nested strict object are reported by dotted path', async () => {
    const details = expectError(await post(make(), '/test/strict', { name: 'x', nested: { a: 'y', b: 1 } }), 400, 'request.unknown_field')
    expect(details).toEqual({ fields: ['nested.b'], accepted: ['a'] })
  })

  it('400 request.missing_field names the field', async () => {
    expect(expectError(await post(make(), '/test/strict', { count: 1 }), 400, 'request.missing_field')).toEqual({ field: 'name' })
    expect(expectError(await post(make(), '/test/strict', { name: 'x', nested: {} }), 400, 'request.missing_field')).toEqual({ field: 'nested.a' })
  })

  it('400 request.missing_field when a body needs at least one field', async () => {
    const app = make()
    const details = expectError(await app.inject({ method: 'PUT', url: '/test/at-least-one', payload: {} }), 400, 'request.missing_field')
    expect(details).toEqual({ accepted: ['a', 'b'] })
    expect((await app.inject({ method: 'PUT', url: '/test/at-least-one', payload: { b: 'x' } })).statusCode).toBe(204)
  })

  it('400 request.invalid_field for wrong types and constraints, never coercing', async () => {
    const app = make()
    expect(expectError(await post(app, '/test/strict', { name: 'x', count: '3' }), 400, 'request.invalid_field')).toEqual({ field: 'count' })
    expect(expectError(await post(app, '/test/strict', { name: 'x', count: -1 }), 400, 'request.invalid_field')).toEqual({ field: 'count' })
    expect(expectError(await post(app, '/test/strict', { name: '' }), 400, 'request.invalid_field')).toEqual({ field: 'name' })
    expect(expectError(await post(app, '/test/strict', { name: 'x', nested: 'y' }), 400, 'request.invalid_field')).toEqual({ field: 'nested' })
  })

  it('a valid body passes through unchanged', async () => {
    const res = await post(make(), '/test/strict', { name: 'x', count: 2, nested: { a: 'b' } })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ name: 'x', count: 2, nested: { a: 'b' } })
  })

  it('routes with unknownKeys: drop remove unknown top-level keys instead of failing', async () => {
    const res = await post(make(), '/test/drop', { name: 'x', extra: 1, more: { y: 2 } })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ name: 'x' })
  })
})

describe('bodies that are not JSON objects', () => {
  const raw = (app: FastifyInstance, payload: string, contentType = 'application/json') =>
    app.inject({ method: 'POST', url: '/test/strict', payload, headers: { 'content-type': contentType } })

  it('400 request.bad_json for malformed JSON, a missing body, or a non-object', async () => {
    const app = make()
    expectError(await raw(app, '{"name": '), 400, 'request.bad_json')
    expectError(await raw(app, ''), 400, 'request.bad_json')
    expectError(await raw(app, '[1,2]'), 400, 'request.bad_json')
    expectError(await raw(app, 'null'), 400, 'request.bad_json')
    expectError(await app.inject({ method: 'POST', url: '/test/strict' }), 400, 'request.bad_json')
    expectError(await raw(app, '{"__proto__": {"polluted": true}, "name": "x"}'), 400, 'request.bad_json')
  })

  it('415 request.unsupported_media_type for a body that is not application/json', async () => {
    const app = make()
    expectError(await raw(app, 'name=x', 'text/plain'), 415, 'request.unsupported_media_type')
    expectError(await raw(app, 'name=x', 'application/x-www-form-urlencoded'), 415, 'request.unsupported_media_type')
  })

  it('413 request.too_large over 1 MB; just under passes the limit', async () => {
    const app = make()
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) })
    expectError(await raw(app, big), 413, 'request.too_large')
    const fits = JSON.stringify({ name: 'x'.repeat(1024 * 1024 - 20) })
    expect(fits.length).toBeLessThanOrEqual(1024 * 1024)
    expect((await raw(app, fits)).statusCode).toBe(200)
  })

  it('a body-less route accepts an empty body sent with a JSON content type', async () => {
    const res = await make().inject({ method: 'GET', url: '/test/items/abc', headers: { 'content-type': 'application/json' } })
    expect(res.statusCode).toBe(200)
  })
})

describe('query strings and path params', () => {
  it('coerces query values to the declared number, boolean and array types', async () => {
    const res = await make().inject({ url: '/test/query?limit=20&on=true&ids=1&ids=2' })
    expect(res.json()).toEqual({ limit: 20, on: true, ids: [1, 2] })
  })

  it('400 request.invalid_field for a bad query value or path param', async () => {
    const app = make()
    expect(expectError(await app.inject({ url: '/test/query?limit=many' }), 400, 'request.invalid_field')).toEqual({ field: 'limit' })
    expect(expectError(await app.inject({ url: '/test/query?limit=500' }), 400, 'request.invalid_field')).toEqual({ field: 'limit' })
    expect(expectError(await app.inject({ url: '/test/items/ABC' }), 400, 'request.invalid_field')).toEqual({ field: 'id' })
    expectError(await app.inject({ url: '/test/items/%zz' }), 400, 'request.invalid_field')
  })
})

describe('routing errors and unexpected failures', () => {
  it('404 request.not_found for an unknown route', async () => {
    expectError(await make().inject({ url: '/v1/nothing-here' }), 404, 'request.not_found')
    expectError(await make().inject({ method: 'POST', url: '/v2/auth', payload: {} }), 404, 'request.not_found')
  })

  it('405 request.method_not_allowed with Allow for a known path', async () => {
    const app = make()
    const res = await app.inject({ method: 'PATCH', url: '/v1/auth' })
    expectError(res, 405, 'request.method_not_allowed')
    expect(res.headers.allow).toBe('DELETE, GET, POST')
    const param = await app.inject({ method: 'DELETE', url: '/test/items/abc' })
    expectError(param, 405, 'request.method_not_allowed')
    expect(param.headers.allow).toBe('GET')
  })

  it('500 internal with a generic message for a thrown non-SvcError; no paths or stacks', async () => {
    const res = await make().inject({ url: '/test/boom' })
    expect(res.json()).toEqual({ error: { code: 'internal', message: 'internal error' } })
    expect(res.statusCode).toBe(500)
  })

  it('an SvcError with a code missing from the table is 500 internal', async () => {
    const res = await make().inject({ url: '/test/unmapped' })
    expect(res.statusCode).toBe(500)
    expect(res.json()).toEqual({ error: { code: 'internal', message: 'internal error' } })
  })

  it('routes added by the engine are gated until an account boots', async () => {
    expectError(await make().inject({ url: '/test/gated' }), 401, 'auth.required')
  })
})

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 and marks strict bodies with additionalProperties: false and x-strict', async () => {
    const res = await make().inject({ url: '/v1/openapi.json' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    const doc = res.json()
    expect(doc.openapi).toBe('3.1.0')
    const auth = doc.paths['/v1/auth'].post
    expect(auth['x-strict']).toBe(true)
    expect(auth.requestBody.content['application/json'].schema.additionalProperties).toBe(false)
    expect(doc.paths['/test/drop'].post['x-strict']).toBe(false)
    expect(doc.paths['/test/drop'].post['x-unknown-keys']).toBe('drop')
    expect(doc.paths['/test/drop'].post.requestBody.content['application/json'].schema.additionalProperties).toBeUndefined()
    expect(doc.paths['/v1/health'].get['x-strict']).toBeUndefined()
    expect(doc.paths['/v1/openapi.json']).toBeUndefined()
    expect(doc.paths['/v1/identities/subscribe'].get.responses['200'].content['text/event-stream']).toBeDefined()
    expect(auth.responses['4XX'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorEnvelope')
    expect(doc.components.schemas.ErrorEnvelope.properties.error.required).toEqual(['code', 'message'])
  })

  it('refuses to register an object body that is neither strict nor dropping unknown keys', async () => {
    const { app } = makeApp({
      app: { routes: [async (a) => void a.post('/test/open', { schema: { body: Type.Object({ a: Type.String() }) } }, async () => ({}))] },
    })
    await expect(app.ready()).rejects.toThrow(/additionalProperties/)
    // an open map (no named fields) is fine
    const { app: maps } = makeApp({
      app: { routes: [async (a) => void a.post('/test/map', { config: { public: true }, schema: { body: Type.Record(Type.String(), Type.Number()) } }, async (req) => req.body)] },
    })
    expect((await post(maps, '/test/map', { x: 1 })).json()).toEqual({ x: 1 })
  })

  it('lists the platform routes', async () => {
    const doc = (await make().inject({ url: '/v1/openapi.json' })).json()
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/health', '/v1/shutdown', '/v1/auth', '/v1/identities/subscribe']))
    expect(Object.keys(doc.paths['/v1/auth']).sort()).toEqual(['delete', 'get', 'post'])
  })
})
