import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { buildApp, type AppOptions } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'

export { expectError } from '../server/helpers.ts'

export interface Booted {
  app: FastifyInstance
  engine: DaemonHost
  session: AccountLifecycle
  accountId: string
  root: string
  close(): Promise<void>
}

/** A real app (DaemonHost over SQLite in a temp data root) with a freshly created account. */
export async function bootApp(opts: Partial<AppOptions> & { controlToken?: string } = {}): Promise<Booted> {
  const root = mkdtempSync(join(tmpdir(), 'svc-routes-'))
  const { controlToken, ...appOpts } = opts
  // One modules list for the account and the app (default: the release's).
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false, ...(appOpts.modules ? { modules: appOpts.modules } : {}) })
  const session = new AccountLifecycle({ dataRoot: root, mode: controlToken ? 'managed' : 'standalone', engine, env: systemEnv, ...(controlToken ? { controlToken } : {}) })
  const app = buildApp({ session, engine, ...appOpts })
  const res = await app.inject({ method: 'POST', url: '/v1/auth', payload: {}, headers: controlToken ? { 'x-svc-control-token': controlToken } : {} })
  expect(res.statusCode).toBe(201)
  return {
    app,
    engine,
    session,
    accountId: res.json<{ accountId: string }>().accountId,
    root,
    async close() {
      // Like `svc serve`: drain, then cut connections a client left open without a request
      // (fetch's pool may hold one; Node's server waits for those until headersTimeout).
      await stopGracefully(app, 1000)
      rmSync(root, { recursive: true, force: true })
    },
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** `app.inject` with a JSON body. */
export const call = (app: FastifyInstance, method: Method, url: string, payload?: unknown) =>
  app.inject({ method, url, ...(payload !== undefined ? { payload: payload as object } : {}) })

/** Expects a 2xx status and returns the JSON body (undefined for 204). */
export async function ok<T = any>(p: Promise<LightMyRequestResponse>, status = 200): Promise<T> {
  const res = await p
  expect({ status: res.statusCode, body: res.body.slice(0, 500) }).toMatchObject({ status })
  return (res.body === '' ? undefined : res.json()) as T
}

export async function newSpace(app: FastifyInstance, name = 'Space'): Promise<string> {
  return (await ok<{ id: string }>(call(app, 'POST', '/v1/spaces', { name }), 201)).id
}

export async function newObject(app: FastifyInstance, spaceId: string, body: unknown = {}): Promise<string> {
  return (await ok<{ objectId: string }>(call(app, 'POST', `/v1/spaces/${spaceId}/objects`, body), 201)).objectId
}

// ------------------------------------------------------------------ SSE over a listening app

export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const addr = app.server.address()
  if (typeof addr !== 'object' || !addr) throw new Error('no address')
  return `http://127.0.0.1:${addr.port}`
}

export interface Frame {
  event: string
  data: any
}

export interface SseClient {
  res: IncomingMessage
  frames: Frame[]
  raw: () => string
  /** Resolves with the frames once `pred` holds for them (or rejects after `ms`). */
  until(pred: (frames: Frame[]) => boolean, ms?: number): Promise<Frame[]>
  ended: Promise<void>
  pause(): void
  resume(): void
  destroy(): void
}

/** Opens an SSE stream (POST with a JSON body, or GET) and parses its frames as they arrive. */
export function openSse(url: string, body?: unknown): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const req = httpRequest(url, { method: payload === undefined ? 'GET' : 'POST', headers: payload === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let text = ''
      let rest = ''
      const frames: Frame[] = []
      const waiters = new Set<() => void>()
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
        rest += chunk
        let i
        while ((i = rest.indexOf('\n\n')) >= 0) {
          const block = rest.slice(0, i)
          rest = rest.slice(i + 2)
          const ev = /^event: (.*)$/m.exec(block)
          const data = /^data: (.*)$/m.exec(block)
          if (ev && data) frames.push({ event: ev[1], data: JSON.parse(data[1]) })
        }
        for (const w of [...waiters]) w()
      })
      const ended = new Promise<void>((r) => res.on('close', () => r()))
      resolve({
        res,
        frames,
        raw: () => text,
        ended,
        until(pred, ms = 5000) {
          return new Promise((ok, fail) => {
            const check = () => {
              if (pred(frames)) {
                waiters.delete(check)
                clearTimeout(t)
                ok(frames)
              }
            }
            const t = setTimeout(() => {
              waiters.delete(check)
              fail(new Error(`timed out; frames: ${JSON.stringify(frames).slice(0, 2000)}`))
            }, ms)
            waiters.add(check)
            check()
          })
        },
        pause: () => res.pause(),
        resume: () => res.resume(),
        destroy: () => req.destroy(),
      })
    })
    req.on('error', reject)
    if (payload !== undefined) req.write(payload)
    req.end()
  })
}
