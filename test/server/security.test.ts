import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, expectError, makeApp } from './helpers.ts'

afterEach(cleanup)

describe('Host header', () => {
  it.each(['127.0.0.1', '127.0.0.1:7001', 'localhost', 'LOCALHOST:80', '[::1]', '[::1]:7001'])('accepts %s', async (host) => {
    const res = await makeApp().app.inject({ url: '/v1/health', headers: { host } })
    expect(res.statusCode).toBe(200)
  })

  it.each(['evil.example', 'evil.example:7001', '127.0.0.1.evil.example', 'localhost.evil.example:7001', '10.0.0.2:7001', '0.0.0.0:7001', '::1'])(
    'refuses %j with 403 request.forbidden_host',
    async (host) => {
      expectError(await makeApp().app.inject({ url: '/v1/health', headers: { host } }), 403, 'request.forbidden_host')
    },
  )

  it('applies to unknown routes and before the auth gate', async () => {
    const { app } = makeApp()
    expectError(await app.inject({ url: '/v1/nope', headers: { host: 'evil.example' } }), 403, 'request.forbidden_host')
    expectError(await app.inject({ url: '/v1/identities/subscribe', headers: { host: 'evil.example' } }), 403, 'request.forbidden_host')
  })
})

describe('Origin and CORS', () => {
  const allowed = ['http://localhost:5173', 'http://127.0.0.1:5173', 'tauri://localhost', 'http://tauri.localhost']

  it.each(allowed)('answers %s with CORS headers', async (origin) => {
    const res = await makeApp().app.inject({ url: '/v1/health', headers: { origin } })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe(origin)
    expect(res.headers.vary).toContain('Origin')
  })

  it.each(['http://evil.example', 'http://localhost:3000', 'https://localhost:5173', 'null', 'http://localhost:5173.evil.example'])(
    'refuses Origin %s with 403 request.forbidden_origin',
    async (origin) => {
      const res = await makeApp().app.inject({ method: 'POST', url: '/v1/auth', payload: {}, headers: { origin } })
      expectError(res, 403, 'request.forbidden_origin')
      expect(res.headers['access-control-allow-origin']).toBeUndefined()
    },
  )

  it('a refused origin never reaches the route (no account gets created)', async () => {
    const { app, session } = makeApp()
    await app.inject({ method: 'POST', url: '/v1/auth', payload: {}, headers: { origin: 'http://evil.example' } })
    expect(session.authorized).toBe(false)
  })

  it('requests without Origin carry no CORS headers', async () => {
    const res = await makeApp().app.inject({ url: '/v1/health' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('answers a preflight from an allowed origin with the allowed methods and headers', async () => {
    const res = await makeApp().app.inject({
      method: 'OPTIONS',
      url: '/v1/auth',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173')
    expect(res.headers['access-control-allow-headers']).toBe('Content-Type, Accept, Range')
    expect(res.headers['access-control-allow-methods']).toContain('POST')
  })

  it('preflights work before boot on gated routes, and refuse foreign origins', async () => {
    const { app } = makeApp()
    const ok = await app.inject({
      method: 'OPTIONS',
      url: '/v1/identities/subscribe',
      headers: { origin: 'tauri://localhost', 'access-control-request-method': 'GET' },
    })
    expect(ok.statusCode).toBe(204)
    const bad = await app.inject({ method: 'OPTIONS', url: '/v1/auth', headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } })
    expectError(bad, 403, 'request.forbidden_origin')
  })

  it('an OPTIONS request that is not a preflight is 405 on a known path', async () => {
    expectError(await makeApp().app.inject({ method: 'OPTIONS', url: '/v1/auth' }), 405, 'request.method_not_allowed')
  })

  it('error responses to an allowed origin carry CORS headers, so the browser can read them', async () => {
    const res = await makeApp().app.inject({ url: '/v1/identities/subscribe', headers: { origin: 'http://127.0.0.1:5173' } })
    expectError(res, 401, 'auth.required')
    expect(res.headers['access-control-allow-origin']).toBe('http://127.0.0.1:5173')
  })
})
