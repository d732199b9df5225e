/**
 * Event bus fan-out (chat.md "Event bus", issue 14): one `POST /v1/events` reaching 1,000 local
 * subscribers (`GET /v1/events/subscribe?type=bench.fanout`, real sockets on 127.0.0.1),
 * timed from the start of the publish request (through `app.inject`, so route validation and
 * the bus's matching are inside) to each client parsing its `event` frame. Baseline: a plain
 * node:http server holding 1,000 responses, timed from the start of one `res.write` loop of a
 * frame of the same size to each client receiving it. Rounds alternate; the figure compares
 * the median of the rounds' p99s. Target: ratio <= 2.
 *
 * `BENCH_EVENTS_SUBS` (default 1,000), `BENCH_EVENTS_ROUNDS` (5).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { DaemonHost } from '../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../node/daemon/account-lifecycle.ts'
import { systemEnv } from '../sync/core/env.ts'
import { buildApp } from '../server/app.ts'
import { stopGracefully } from '../server/lifecycle.ts'
import { sseFrame } from '../server/sse.ts'

const SUBS = Number(process.env.BENCH_EVENTS_SUBS ?? 1_000)
const ROUNDS = Number(process.env.BENCH_EVENTS_ROUNDS ?? 5)
const MATCH = 'event: event'

const progress = (msg: string) => process.stderr.write(`[bench events] ${msg}\n`)
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const r3 = (x: number) => Math.round(x * 1000) / 1000

interface Client {
  armed: Promise<void>
  /** When `MATCH` next arrives after `rearm()`. */
  next(): Promise<number>
  close(): void
}

/** A GET stream that reports when each later `MATCH` arrives (one client serves every round). */
function streamClient(url: string, ready: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    let text = ''
    let onReady!: () => void
    const armed = new Promise<void>((r) => (onReady = r))
    let isReady = false
    let from = 0
    let waiter: ((t: number) => void) | undefined
    const req = httpRequest(url, { agent: false }, (res: IncomingMessage) => {
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        const t = performance.now()
        text += chunk
        if (!isReady && text.includes(ready)) {
          isReady = true
          from = text.length
          onReady()
        }
        if (isReady && waiter && text.indexOf(MATCH, from) >= 0) {
          from = text.length
          const w = waiter
          waiter = undefined
          w(t)
        }
        if (text.length > 1 << 20) {
          text = text.slice(from)
          from = 0
        }
      })
      resolve({ armed, next: () => new Promise<number>((r) => (waiter = r)), close: () => req.destroy() })
    })
    req.on('error', (err) => {
      if (!isReady) reject(err)
    })
    req.end()
  })
}

async function openMany(n: number, open: () => Promise<Client>): Promise<Client[]> {
  const out: Client[] = []
  for (let i = 0; i < n; i += 100) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(100, n - i) }, open))))
    await Promise.all(out.slice(i).map((c) => c.armed))
  }
  return out
}

/** The raw side: `n` held responses, one write loop per round. */
async function rawServer(n: number) {
  const held: ServerResponse[] = []
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.socket?.setNoDelay(true)
    res.write(': ready\n\n')
    held.push(res)
  })
  server.maxConnections = n + 10
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  const clients = await openMany(n, () => streamClient(url, ': ready'))
  return {
    async round(frame: string): Promise<number[]> {
      const arrivals = clients.map((c) => c.next())
      const t0 = performance.now()
      for (const res of held) res.write(frame)
      return (await Promise.all(arrivals)).map((t) => t - t0)
    },
    async close() {
      for (const c of clients) c.close()
      for (const res of held) res.end()
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

export async function benchEvents(): Promise<Record<string, unknown>> {
  const root = mkdtempSync(join(tmpdir(), 'svc-bench-events-'))
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  const app = buildApp({ session, engine })
  try {
    const auth = await app.inject({ method: 'POST', url: '/v1/auth', payload: {} })
    if (auth.statusCode !== 201) throw new Error(`auth: ${auth.body}`)
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    progress(`opening ${SUBS} subscriptions`)
    const subs = await openMany(SUBS, () => streamClient(`${base}/v1/events/subscribe?type=bench.fanout`, 'event: ready'))
    const raw = await rawServer(SUBS)
    const body = { type: 'bench.fanout', scope: 'device', target: 'obj-1', data: { spaceId: 'x'.repeat(44), objectId: 'y'.repeat(44), n: 0 } }
    // The raw loop writes a frame as long as the bus's.
    const frame = sseFrame('event', { ...body, sender: { identity: engine.account().accountId, self: true } })
    const busRounds: number[][] = []
    const rawRounds: number[][] = []
    for (let round = 0; round < ROUNDS + 1; round++) {
      const arrivals = subs.map((c) => c.next())
      const t0 = performance.now()
      const res = await app.inject({ method: 'POST', url: '/v1/events', payload: { ...body, data: { ...body.data, n: round } } })
      const matched = res.json<{ subscribers: number }>().subscribers
      if (matched !== SUBS) throw new Error(`publish matched ${matched} of ${SUBS}`)
      const bus = (await Promise.all(arrivals)).map((t) => t - t0)
      const rw = await raw.round(frame)
      // Round 0 warms both sides up (JIT, socket buffers) and is not counted.
      if (round > 0) {
        busRounds.push(bus)
        rawRounds.push(rw)
        progress(`round ${round}: bus p50 ${r3(pct(bus, 50))} p99 ${r3(pct(bus, 99))} ms; raw p50 ${r3(pct(rw, 50))} p99 ${r3(pct(rw, 99))} ms`)
      }
      await new Promise((r) => setTimeout(r, 100))
    }
    for (const c of subs) c.close()
    await raw.close()
    const median = (xs: number[]) => pct(xs, 50)
    const busP99 = median(busRounds.map((r) => pct(r, 99)))
    const rawP99 = median(rawRounds.map((r) => pct(r, 99)))
    const out = {
      subscribers: SUBS,
      rounds: ROUNDS,
      frameBytes: Buffer.byteLength(frame),
      busP50Ms: r3(median(busRounds.map((r) => pct(r, 50)))),
      busP99Ms: r3(busP99),
      rawWriteP50Ms: r3(median(rawRounds.map((r) => pct(r, 50)))),
      rawWriteP99Ms: r3(rawP99),
      ratio: r3(busP99 / rawP99),
      target: 2,
      pass: busP99 / rawP99 <= 2,
    }
    progress(JSON.stringify(out))
    return { fanout: out }
  } finally {
    await stopGracefully(app, 1000)
    rmSync(root, { recursive: true, force: true })
  }
}
