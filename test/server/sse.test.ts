import { request as httpRequest, type IncomingMessage } from 'node:http'
import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import type { SseStream } from '../../server/sse.ts'
import { cleanup, createAccount, makeApp, TOKEN } from './helpers.ts'

afterEach(cleanup)

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const addr = app.server.address()
  if (typeof addr !== 'object' || !addr) throw new Error('no address')
  return `http://127.0.0.1:${addr.port}`
}

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 10))
  }
}

interface Opened {
  res: IncomingMessage
  text: () => string
  ended: Promise<void>
  destroy: () => void
}

function openStream(url: string, headers: Record<string, string> = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      const ended = new Promise<void>((r) => res.on('close', () => r()))
      resolve({ res, text: () => text, ended, destroy: () => req.destroy() })
    })
    req.on('error', reject)
    req.end()
  })
}

/** The body of a raw HTTP/1.1 chunked response. */
function dechunk(raw: string): string {
  let rest = raw.slice(raw.indexOf('\r\n\r\n') + 4)
  let body = ''
  for (;;) {
    const eol = rest.indexOf('\r\n')
    const size = Number.parseInt(rest.slice(0, eol), 16)
    if (size === 0) return body
    body += rest.slice(eol + 2, eol + 2 + size)
    rest = rest.slice(eol + 2 + size + 2)
  }
}

const CLOSED = (reason: string) => `event: closed\ndata: {"reason":"${reason}"}\n\n`

describe('SSE streams', () => {
  it('opens with ready, sends keepalive comments while idle, closes with server_shutdown on close', async () => {
    const { app } = makeApp({ app: { sse: { keepaliveMs: 40 } } })
    await createAccount(app)
    const base = await listen(app)
    const s = await openStream(`${base}/v1/identities/subscribe`)
    expect(s.res.statusCode).toBe(200)
    expect(s.res.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(s.res.headers['cache-control']).toBe('no-cache')
    await until(() => s.text().includes(': keepalive\n\n'))
    expect(s.text().startsWith('event: ready\ndata: {}\n\n')).toBe(true)
    expect(app.sse.size).toBe(1)

    const started = Date.now()
    await app.close()
    await s.ended
    expect(s.text().endsWith(CLOSED('server_shutdown'))).toBe(true)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('closes streams with deauthorized when a managed server signs out', async () => {
    const { app } = makeApp({ mode: 'managed' })
    await createAccount(app, { 'x-svc-control-token': TOKEN })
    const base = await listen(app)
    const s = await openStream(`${base}/v1/identities/subscribe`)
    await until(() => s.text().includes('event: ready'))
    const res = await fetch(`${base}/v1/auth`, { method: 'DELETE', headers: { 'x-svc-control-token': TOKEN } })
    expect(res.status).toBe(204)
    await s.ended
    expect(s.text().endsWith(CLOSED('deauthorized'))).toBe(true)
    expect(app.sse.size).toBe(0)
  })

  it('a stream opened after its account was torn down closes at once with deauthorized', async () => {
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    let entered = false
    const { app } = makeApp({
      mode: 'managed',
      app: {
        routes: [
          async (a) => {
            a.get('/test/late', async (_req, reply) => {
              entered = true
              await released // the request passed the gate; the account goes away meanwhile
              a.sse.open(reply)
            })
          },
        ],
      },
    })
    await createAccount(app, { 'x-svc-control-token': TOKEN })
    const base = await listen(app)
    const opening = openStream(`${base}/test/late`)
    await until(() => entered)
    expect((await fetch(`${base}/v1/auth`, { method: 'DELETE', headers: { 'x-svc-control-token': TOKEN } })).status).toBe(204)
    release()
    const s = await opening
    await s.ended
    expect(s.text()).toBe(`event: ready\ndata: {}\n\n${CLOSED('deauthorized')}`)
    expect(app.sse.size).toBe(0)
  })

  it('keeps CORS headers for an allowed origin', async () => {
    const { app } = makeApp()
    await createAccount(app)
    const base = await listen(app)
    const s = await openStream(`${base}/v1/identities/subscribe`, { origin: 'http://localhost:5173' })
    expect(s.res.headers['access-control-allow-origin']).toBe('http://localhost:5173')
    s.destroy()
  })

  it('forgets a stream whose client went away and tells its owner', async () => {
    let reason: string | undefined
    const { app } = makeApp({
      app: {
        routes: [
          async (a) => {
            a.get('/test/stream', { config: { public: true } }, async (_req, reply) => {
              a.sse.open(reply).onClose((r) => (reason = r))
            })
          },
        ],
      },
    })
    const base = await listen(app)
    const s = await openStream(`${base}/test/stream`)
    await until(() => app.sse.size === 1)
    s.destroy()
    await until(() => app.sse.size === 0)
    expect(reason).toBe('disconnected')
  })

  it('closes a slow reader with overflow instead of buffering without bound', async () => {
    let stream: SseStream | undefined
    let sent = 0
    const frame = 'x'.repeat(64 * 1024)
    const { app } = makeApp({
      app: {
        routes: [
          async (a) => {
            a.get('/test/flood', { config: { public: true } }, async (_req, reply) => {
              stream = a.sse.open(reply, { mailboxCapacity: 4 }) // clamped to the minimum, 16
              setImmediate(() => {
                while (sent < 5000 && stream!.send('chunk', { n: sent, frame })) sent++
              })
            })
          },
        ],
      },
    })
    const base = await listen(app)
    const { hostname, port } = new URL(base)
    const socket = connect(Number(port), hostname)
    let received = ''
    let slow = true
    socket.setEncoding('utf8')
    socket.on('data', (c: string) => {
      received += c
      if (slow && received.includes('event: ready')) socket.pause() // stop reading: a slow client
    })
    socket.write(`GET /test/flood HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)

    await until(() => stream?.closed === true, 15_000)
    expect(sent).toBeGreaterThan(16)
    expect(sent).toBeLessThan(5000)
    expect(app.sse.size).toBe(0)
    // Nothing beyond the mailbox was kept: the queue was dropped when the stream closed.
    expect(stream!.queued).toBe(0)

    slow = false
    socket.resume()
    await until(() => received.endsWith('\r\n0\r\n\r\n')) // the chunked response ended
    socket.destroy()
    const body = dechunk(received)
    expect(body.startsWith('event: ready\ndata: {}\n\n')).toBe(true)
    expect(body.endsWith(CLOSED('overflow'))).toBe(true)
    // Frames arrive in order with no gap up to the last one that reached the socket.
    const ns = [...body.matchAll(/"n":(\d+)/g)].map((m) => Number(m[1]))
    expect(ns).toEqual(ns.map((_, i) => i))
    expect(ns.length).toBeLessThanOrEqual(sent)
  })

  it('disconnects a reader that never takes the closing bytes after the grace period', async () => {
    let stream: SseStream | undefined
    const { app } = makeApp({
      app: {
        sse: { closeGraceMs: 100 },
        routes: [
          async (a) => {
            a.get('/test/flood', { config: { public: true } }, async (_req, reply) => {
              stream = a.sse.open(reply, { mailboxCapacity: 16 })
              // One frame per turn of the event loop, so the kernel's buffers fill up first.
              const pump = () => {
                if (stream!.send('chunk', 'x'.repeat(64 * 1024))) setImmediate(pump)
              }
              pump()
            })
          },
        ],
      },
    })
    const base = await listen(app)
    const { port } = new URL(base)
    const socket = connect(Number(port), '127.0.0.1')
    socket.on('data', () => socket.pause()) // reads the first bytes, then never again
    socket.write(`GET /test/flood HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
    await until(() => stream?.closed === true, 20_000)
    const connections = () => new Promise<number>((r) => app.server.getConnections((_e, n) => r(n)))
    expect(await connections()).toBe(1)
    await until(() => false, 300).catch(() => undefined)
    expect(await connections()).toBe(0)
    socket.destroy()
  })
})
