import type { FastifyInstance } from 'fastify'
import type { Req } from './fuzz-openapi.ts'

const PER_REQUEST_MS = 10_000

/** How the app answered the requests of fuzz.test.ts. */
export interface Answers {
  /** A hang, a 5xx, or an error answer that is not the envelope. */
  failures: string[]
  /** 501 `sdk.not_implemented`, by method and path: counted, not failures. */
  notImplemented: Set<string>
  /** Non-GET requests (other than half-good ones) that were answered 2xx. */
  accepted: string[]
  /** Status counts by request kind. */
  byKind: Map<string, Map<number, number>>
}

/** Sends every request, a few in flight (inject runs in-process), each with its time limit, and sorts the answers. */
export async function sendAll(app: FastifyInstance, reqs: Req[]): Promise<Answers> {
  const failures: string[] = []
  const notImplemented = new Set<string>()
  const accepted: string[] = []
  const r501 = (u: string) => u.split('?')[0].slice(0, 80)
  const byKind = new Map<string, Map<number, number>>()
  const show = (q: Req) => `${q.kind} ${q.method} ${q.url.slice(0, 120)} ${(q.payload ?? '').slice(0, 160)}`
  const send = async (q: Req) => {
    let timer: NodeJS.Timeout | undefined
    const res = await Promise.race([
      app.inject({ method: q.method as 'GET', url: q.url, ...(q.headers ? { headers: q.headers } : {}), ...(q.payload !== undefined ? { payload: q.payload } : {}) }),
      new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), PER_REQUEST_MS))),
    ]).finally(() => clearTimeout(timer))
    if (res === 'timeout') return void failures.push(`hang: ${show(q)}`)
    const st = res.statusCode
    const m = byKind.get(q.kind) ?? new Map<number, number>()
    byKind.set(q.kind, m.set(st, (m.get(st) ?? 0) + 1))
    // 501 `sdk.not_implemented` is the spec's deliberate answer for what this release leaves
    // out (type delete, attach/detach, per-peer status): counted, not a failure.
    if (st === 501 && /"code":"sdk\.not_implemented"/.test(res.body)) return void notImplemented.add(`${q.method} ${r501(q.url)}`)
    if (st >= 500) return void failures.push(`${st}: ${show(q)} -> ${res.body.slice(0, 300)}`)
    if (st >= 200 && st < 300) {
      if (q.method !== 'GET' && q.kind !== 'half-good') accepted.push(`${st} ${show(q)}`)
      return
    }
    let env: any
    try {
      env = JSON.parse(res.body)
    } catch {
      return void failures.push(`${st} not JSON: ${show(q)} -> ${res.body.slice(0, 200)}`)
    }
    const e = env?.error
    if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || e.code === '' || st < 400)
      failures.push(`${st} not the envelope: ${show(q)} -> ${res.body.slice(0, 200)}`)
  }
  const INFLIGHT = 6
  let next = 0
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (next < reqs.length) await send(reqs[next++])
    }),
  )
  return { failures, notImplemented, accepted, byKind }
}
