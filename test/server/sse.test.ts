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
    socket.setEncoding('utf8')
    socket.on('data', (c: string) => {
      received += c
      if (received.includes('event: ready')) socket.pause() // stop reading: a slow client
    })
    socket.write(`GET /test/flood HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)

    await until(() => stream?.closed === true, 15_000)
    expect(sent).toBeGreaterThan(16)
    expect(sent).toBeLessThan(5000)
    expect(app.sse.size).toBe(0)
    // Nothing beyond the mailbox was kept: the queue was dropped when the stream closed.
    expect(stream!.queued).toBe(0)

    const ended = new Promise((r) => socket.on('end', r))
    socket.resume()
    await ended
    socket.destroy()
    expect(received.trimEnd().endsWith('event: closed\ndata: {"reason":"overflow"}')).toBe(true)
    // Frames arrive in order with no gap up to the last one that reached the socket.
    const ns = [...received.matchAll(/"n":(\d+)/g)].map((m) => Number(m[1]))
    expect(ns).toEqual(ns.map((_, i) => i))
    expect(ns.length).toBeLessThanOrEqual(sent)
  })
})
