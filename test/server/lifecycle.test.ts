import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { gate } from '../../server/http/gate.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { cleanup, createAccount, makeApp } from './helpers.ts'

afterEach(cleanup)

function slowRoutes(release: Promise<void>) {
  return async (app: FastifyInstance) => {
    app.get('/test/slow', { config: { public: true } }, async () => {
      await release
      return { done: true }
    })
  }
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
}

describe('graceful stop', () => {
  it('lets an in-flight request finish, refuses new connections, then tears the account down', async () => {
    let release!: () => void
    const t = makeApp({ app: { routes: [slowRoutes(new Promise((r) => (release = r)))] } })
    await createAccount(t.app)
    const base = await listen(t.app)
    const inflight = fetch(`${base}/test/slow`)
    await new Promise((r) => setTimeout(r, 50))

    const stopped = stopGracefully(t.app)
    await new Promise((r) => setTimeout(r, 50))
    expect(t.engine.teardowns).toBe(0) // still draining
    await expect(fetch(`${base}/v1/health`)).rejects.toThrow()

    const released = Date.now()
    release()
    const res = await inflight
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ done: true })
    await stopped
    expect(Date.now() - released).toBeLessThan(3000) // did not wait for the 10 s cut
    expect(t.engine.teardowns).toBe(1)
    expect(t.session.authorized).toBe(false)
  })

  it('cuts requests still running when the drain time is up', async () => {
    const t = makeApp({ app: { routes: [slowRoutes(new Promise(() => {}))] } })
    const base = await listen(t.app)
    const inflight = fetch(`${base}/test/slow`).then(
      () => 'answered',
      () => 'cut',
    )
    await new Promise((r) => setTimeout(r, 50))
    const started = Date.now()
    await stopGracefully(t.app, 200)
    expect(Date.now() - started).toBeLessThan(2000)
    expect(await inflight).toBe('cut')
  })

  it('the gate answers 503 server.unavailable while closing, before the auth check', async () => {
    const closing = gate({ authorized: () => false, closing: () => true })
    await expect(closing({ routeOptions: { url: '/v1/health', config: { public: true } } } as never)).rejects.toMatchObject({
      code: 'server.unavailable',
    })
  })
})
