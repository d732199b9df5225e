import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, listen, type Booted } from './helpers.ts'

/**
 * The HTTP edges (docs/api.md "HTTP edges"): every non-2xx carries the error envelope, also the
 * ones Node's parser raises before Fastify sees a request. Those need raw bytes on a socket:
 * `app.inject` cannot send a broken request line or stall a body.
 */
const BODY_TIMEOUT_MS = 400
const HEADERS_TIMEOUT_MS = 600

let b: Booted
let port: number
beforeAll(async () => {
  b = await bootApp({ bodyTimeoutMs: BODY_TIMEOUT_MS, headersTimeoutMs: HEADERS_TIMEOUT_MS })
  port = Number(new URL(await listen(b.app)).port)
})
afterAll(async () => b?.close())

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
  /** Whether the server closed the connection after answering. */
  closed: boolean
}

/**
 * Writes `chunks` (a string or a list sent in order) on a fresh connection and reads one
 * response. Resolves once the response is complete (and, when it says `Connection: close`,
 * the server closed the socket); fails after 20 s.
 */
function rawRequest(chunks: string | string[]): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      const head = data.indexOf('\r\n\r\n')
      if (head < 0) {
        if (closed) fail(new Error(`connection closed without a response: ${JSON.stringify(data)}`))
        return
      }
      const lines = data.slice(0, head).split('\r\n')
      const headers: Record<string, string> = {}
      for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim()
      const body = data.slice(head + 4)
      if (!closed && headers['content-length'] !== undefined && Buffer.byteLength(body) < Number(headers['content-length'])) return
      // A response that announces the close: wait for it, so `closed` tells whether it came.
      if (!closed && headers.connection === 'close') return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ status: Number(lines[0].split(' ')[1]), headers, body, closed })
    }
    const fail = (err: Error) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      reject(err)
    }
    const timer = setTimeout(() => fail(new Error(`no response within 20 s: ${JSON.stringify(data)}`)), 20_000)
    socket.setEncoding('utf8')
    socket.on('data', (c: string) => {
      data += c
      finish(false)
    })
    socket.on('end', () => finish(true))
    socket.on('close', () => finish(true))
    socket.on('error', (err) => (data.includes('\r\n\r\n') ? finish(true) : fail(err)))
    socket.on('connect', () => {
      for (const c of Array.isArray(chunks) ? chunks : [chunks]) socket.write(c)
    })
  })
}

function expectEnvelope(res: RawResponse, status: number, code: string): { message: string; details?: Record<string, unknown> } {
  expect({ status: res.status, type: res.headers['content-type'] }).toEqual({ status, type: 'application/json; charset=utf-8' })
  const parsed = JSON.parse(res.body) as { error: { code: string; message: string; details?: Record<string, unknown> } }
  expect(parsed.error.code).toBe(code)
  expect(typeof parsed.error.message).toBe('string')
  return parsed.error
}

const HOST = () => `127.0.0.1:${port}`

describe('errors of the HTTP parser carry the envelope', () => {
  it('a malformed request line is 400 request.malformed', async () => {
    const res = await rawRequest('GARBAGE\r\n\r\n')
    expectEnvelope(res, 400, 'request.malformed')
    expect(res.closed).toBe(true)
  })

  it('an unknown HTTP version is 400 request.malformed', async () => {
    expectEnvelope(await rawRequest(`GET /v1/health HTTP/9.9\r\nHost: ${HOST()}\r\n\r\n`), 400, 'request.malformed')
  })

  it('Content-Length together with chunked encoding is 400 request.malformed', async () => {
    const res = await rawRequest(
      `POST /v1/spaces HTTP/1.1\r\nHost: ${HOST()}\r\nContent-Type: application/json\r\nContent-Length: 13\r\nTransfer-Encoding: chunked\r\n\r\nd\r\n{"name":"x"}\r\n0\r\n\r\n`,
    )
    const err = expectEnvelope(res, 400, 'request.malformed')
    expect(err.message).toMatch(/Content-Length/)
  })

  it('a 32 KB header is 431 request.headers_too_large', async () => {
    const res = await rawRequest(`GET /v1/health HTTP/1.1\r\nHost: ${HOST()}\r\nX-Big: ${'a'.repeat(32 * 1024)}\r\n\r\n`)
    expectEnvelope(res, 431, 'request.headers_too_large')
  })

  it('headers that never finish are 408 request.timeout', async () => {
    const res = await rawRequest(`GET /v1/health HTTP/1.1\r\nHost: ${HOST()}\r\nX-Slow: 1\r\n`)
    expectEnvelope(res, 408, 'request.timeout')
    expect(res.closed).toBe(true)
  })

  it('HTTP/1.1 without Host is 400 request.malformed; HTTP/1.0 without Host is refused as a foreign host', async () => {
    const res = await rawRequest('GET /v1/health HTTP/1.1\r\n\r\n')
    expect(expectEnvelope(res, 400, 'request.malformed').message).toMatch(/Host/)
    expectEnvelope(await rawRequest('GET /v1/health HTTP/1.0\r\n\r\n'), 403, 'request.forbidden_host')
  })
})

describe('Host', () => {
  it('two Host headers are refused even when both are loopback', async () => {
    const res = await rawRequest(`GET /v1/health HTTP/1.1\r\nHost: ${HOST()}\r\nHost: evil.example\r\n\r\n`)
    expect(expectEnvelope(res, 403, 'request.forbidden_host').message).toMatch(/more than one Host/)
    expectEnvelope(await rawRequest(`GET /v1/health HTTP/1.1\r\nHost: ${HOST()}\r\nHost: ${HOST()}\r\n\r\n`), 403, 'request.forbidden_host')
  })

  it('an absolute-form target with a foreign host is refused; a loopback Host header does not launder it', async () => {
    const res = await rawRequest(`GET http://evil.example/v1/health HTTP/1.1\r\nHost: ${HOST()}\r\n\r\n`)
    expect(expectEnvelope(res, 403, 'request.forbidden_host').message).toMatch(/target/)
  })

  it('a plain request still passes (the control)', async () => {
    const res = await rawRequest(`GET /v1/health HTTP/1.1\r\nHost: ${HOST()}\r\nConnection: close\r\n\r\n`)
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body).status).toBe('ok')
  })
})

describe('request bodies', () => {
  it('a body that stops arriving is 408 request.timeout and the connection closes', async () => {
    const res = await rawRequest(`POST /v1/spaces HTTP/1.1\r\nHost: ${HOST()}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"`)
    expect(expectEnvelope(res, 408, 'request.timeout').message).toMatch(/body/)
    expect(res.headers.connection).toBe('close')
    expect(res.closed).toBe(true)
  })

  it('a chunked body that stops arriving is 408 too', async () => {
    const res = await rawRequest(`POST /v1/spaces HTTP/1.1\r\nHost: ${HOST()}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{"\r\n`)
    expectEnvelope(res, 408, 'request.timeout')
  })

  it('a body sent in pieces within the timeout is served (the control)', async () => {
    const body = JSON.stringify({ name: 'slow but in time' })
    const res = await rawRequest([
      `POST /v1/spaces HTTP/1.1\r\nHost: ${HOST()}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
      body,
    ])
    expect(res.status).toBe(201)
  })

  it('a charset other than UTF-8 is 415; utf-8 and UTF8 are accepted', async () => {
    const post = (charset: string, payload: string | Buffer) =>
      b.app.inject({ method: 'POST', url: '/v1/spaces', payload, headers: { 'content-type': `application/json; charset=${charset}` } })
    const err = expectError(await post('latin1', '{"name":"caf\u00e9"}'), 415, 'request.unsupported_media_type')
    expect(err).toBeUndefined()
    expect((await post('latin1', '{"name":"x"}')).json().error.message).toMatch(/latin1/)
    expectError(await post('"iso-8859-1"', '{"name":"x"}'), 415, 'request.unsupported_media_type')
    expect((await post('utf-8', '{"name":"caf\u00e9"}')).statusCode).toBe(201)
    expect((await post('UTF8', '{"name":"x"}')).statusCode).toBe(201)
  })

  it('invalid UTF-8 in a body is 400 request.bad_json, not stored as U+FFFD', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])
    const res = await b.app.inject({ method: 'POST', url: '/v1/spaces', payload: bytes, headers: { 'content-type': 'application/json' } })
    expect(expectError(res, 400, 'request.bad_json')).toBeUndefined()
    expect(res.json().error.message).toMatch(/UTF-8/)
  })

  it.each([
    ['{"__proto__": {"polluted": true}, "name": "x"}', '__proto__'],
    ['{"name": "x", "meta": {"__proto__": {"polluted": true}}}', '__proto__'],
    ['{"name": "x", "\\u005f_proto__": 1}', '__proto__'],
    ['{"constructor": {"prototype": {"polluted": true}}, "name": "x"}', 'constructor.prototype'],
    ['{"\\u0063onstructor": {"prototype": {"polluted": true}}, "name": "x"}', 'constructor.prototype'],
  ])('a prototype key is refused with a message naming it: %s', async (payload, key) => {
    const res = await b.app.inject({ method: 'POST', url: '/v1/spaces', payload, headers: { 'content-type': 'application/json' } })
    const details = expectError(res, 400, 'request.bad_json')
    expect(details).toEqual({ key })
    expect(res.json().error.message).toContain(`"${key}"`)
    const probe: Record<string, unknown> = {}
    expect(probe.polluted).toBeUndefined()
  })

  it('a key named constructor without prototype is ordinary data', async () => {
    const res = await call(b.app, 'POST', '/v1/spaces', { name: 'x', constructor: { name: 'y' } })
    // Refused by the strict schema as an unknown field, not as a prototype key.
    expectError(res, 400, 'request.unknown_field')
  })
})

describe('a route that streams its own body (config.streamedBody)', () => {
  it('is exempt from the body timeout and the 1 MB limit; other routes of the same app are not', async () => {
    const upload = async (app: import('fastify').FastifyInstance) => {
      // As an upload module would: its own parser, inside its own plugin, handing over the stream.
      app.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload))
      app.post('/test/upload', { config: { streamedBody: true } }, async (request) => {
        // 'data' events, as pipe() and pipeline() read a stream.
        const stream = request.body as NodeJS.ReadableStream
        const bytes = await new Promise<number>((resolve, reject) => {
          let n = 0
          stream.on('data', (chunk: Buffer) => (n += chunk.length))
          stream.on('end', () => resolve(n))
          stream.on('error', reject)
        })
        return { bytes }
      })
    }
    const s = await bootApp({ bodyTimeoutMs: BODY_TIMEOUT_MS, routes: [upload] })
    try {
      const p = Number(new URL(await listen(s.app)).port)
      const big = 1024 * 1024 + 10
      const res = await new Promise<string>((resolve, reject) => {
        const socket = connect(p, '127.0.0.1')
        let data = ''
        const timer = setTimeout(() => reject(new Error(`no answer: ${data}`)), 20_000)
        socket.setEncoding('utf8').on('data', (c: string) => (data += c))
        socket.on('close', () => {
          clearTimeout(timer)
          resolve(data)
        })
        socket.on('error', reject)
        socket.on('connect', () => {
          socket.write(`POST /test/upload HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${big}\r\nConnection: close\r\n\r\n`)
          socket.write(Buffer.alloc(1000))
          // Pauses longer than the body timeout, then the rest (over 1 MB in all).
          setTimeout(() => socket.write(Buffer.alloc(big - 1000)), BODY_TIMEOUT_MS * 3)
        })
      })
      expect(res.split('\r\n')[0]).toBe('HTTP/1.1 200 OK')
      expect(JSON.parse(res.slice(res.indexOf('\r\n\r\n') + 4))).toEqual({ bytes: big })
    } finally {
      await s.close()
    }
  })
})
