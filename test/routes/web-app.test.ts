import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildWebApp } from '../../scripts/build-app.ts'
import { APP_CSP, SANDBOX_CSP } from '../../server/http/content-policy.ts'
import { bootApp, call, expectError, type Booted } from './helpers.ts'

/*
 * The web app's files (issue 37) are served at / and /app/*, each under the app's strict CSP,
 * which is the only place the API's origin serves active content; every other answer keeps
 * the sandbox CSP.
 */
let b: Booted
beforeAll(async () => {
  await buildWebApp()
  b = await bootApp()
}, 60_000)
afterAll(async () => b?.close())

describe('the web app', () => {
  it('GET / is the app page under the strict CSP, with no framing and no sniffing', async () => {
    const res = await call(b.app, 'GET', '/')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/html')
    expect(res.headers['content-security-policy']).toBe(APP_CSP)
    expect(APP_CSP).toContain("script-src 'self'")
    expect(APP_CSP).not.toContain('unsafe-inline')
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.body).toContain('<script type="module" src="/app/app.js"></script>')
  })

  it('serves its script and stylesheet, and nothing else under /app', async () => {
    const js = await call(b.app, 'GET', '/app/app.js')
    expect(js.statusCode).toBe(200)
    expect(js.headers['content-type']).toContain('text/javascript')
    expect((await call(b.app, 'GET', '/app/app.css')).headers['content-type']).toContain('text/css')
    for (const path of ['/app/index.html', '/app/..%2Fpackage.json', '/app/app.js.map', '/app/secret']) expectError(await call(b.app, 'GET', path), 404, 'sdk.not_found')
  })

  it('API answers keep the sandbox CSP', async () => {
    expect((await call(b.app, 'GET', '/v1/health')).headers['content-security-policy']).toBe(SANDBOX_CSP)
  })
})
