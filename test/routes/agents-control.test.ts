import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { AgentsHost } from '../../node/agents/host.ts'
import { buildAgentControlApp, controlHost, listenAgentControl } from '../../server/modules/agents.ts'
import { readTrigger } from '../../sync/modules/agents/store.ts'
import { addProgram, addTrigger, agentAccount, T0 } from '../agents/helpers.ts'

const apps: FastifyInstance[] = []
const hosts: AgentsHost[] = []
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close()
  for (const h of hosts.splice(0)) await h.stop()
})

async function setup() {
  const a = await agentAccount()
  const host = new AgentsHost(a.account, a.env, 'peer-A', { timers: false })
  hosts.push(host)
  await host.start()
  const app = buildAgentControlApp(() => host)
  apps.push(app)
  return { ...a, host, app }
}

const H = { host: '127.0.0.1:7010' }

describe('agent control API', () => {
  it('GET /election says whether this device is the active one', async () => {
    const { app } = await setup()
    const res = await app.inject({ method: 'GET', url: '/election', headers: H })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ app: 'svc-agent', enabled: true, active: true, peerId: 'peer-A', winner: 'peer-A' })
  })

  it('GET /triggers lists the registry; GET /triggers/:id one record; unknown ids are 404', async () => {
    const { app, space, host } = await setup()
    await addTrigger(space, 't1', { kind: 'cron', spec: { every_s: 10 }, program: 'agent:noop@v1' })
    await host.tick()
    const list = (await app.inject({ method: 'GET', url: '/triggers', headers: H })).json()
    expect(list.triggers.map((t: { id: string }) => t.id)).toContain('t1')
    const t1 = list.triggers.find((t: { id: string }) => t.id === 't1')
    expect(t1).toMatchObject({ owner: 'peer-A', enabled: true, spaceId: space.spaceId, stats: { nextAt: T0 + 10_000, running: false } })
    const one = await app.inject({ method: 'GET', url: '/triggers/t1', headers: H })
    expect(one.json()).toMatchObject({ id: 't1', kind: 'cron' })
    const missing = await app.inject({ method: 'GET', url: '/triggers/nope', headers: H })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error.code).toBe('agents.trigger_not_found')
  })

  it('PATCH writes through to the dataset and re-arms forward; disable and enable flip the record; enable resets the breaker', async () => {
    const { app, space, host, env } = await setup()
    await addProgram(space, 'fail@v1', 'function main() { throw new Error("no") }')
    await addTrigger(space, 't2', { kind: 'cron', spec: { every_s: 10 }, program: 'fail@v1', maxConsecutiveFailures: 1 })
    await host.tick()
    env.set(T0 + 5_000)
    const patched = await app.inject({ method: 'PATCH', url: '/triggers/t2', headers: H, payload: { spec: { every_s: 60 } } })
    expect(patched.statusCode).toBe(200)
    expect(patched.json()).toMatchObject({ spec: { every_s: 60 }, stats: { nextAt: (Math.floor((T0 + 5_000) / 60_000) + 1) * 60_000 } })
    expect((await readTrigger(space, 't2')).value!.spec).toEqual({ every_s: 60 })

    env.set((Math.floor((T0 + 5_000) / 60_000) + 1) * 60_000)
    await host.tick()
    await host.scheduler.idle()
    expect((await readTrigger(space, 't2')).value).toMatchObject({ enabled: false, lastStatus: 'auto_disabled' })
    const runs = (await app.inject({ method: 'GET', url: '/triggers/t2/runs', headers: H })).json().runs
    expect(runs).toHaveLength(1)
    expect(runs[0]).toMatchObject({ status: 'failed', error: 'no' })

    const enabled = await app.inject({ method: 'POST', url: '/triggers/t2/enable', headers: H })
    expect(enabled.json()).toMatchObject({ enabled: true, stats: { consecutiveFailures: 0 } })
    expect((await readTrigger(space, 't2')).value!.lastStatus).toBeUndefined()
    const disabled = await app.inject({ method: 'POST', url: '/triggers/t2/disable', headers: H })
    expect(disabled.json()).toMatchObject({ enabled: false })
    expect((await readTrigger(space, 't2')).value!.enabled).toBe(false)
  })

  it('POST /run runs a program by spec or by source and answers the run envelope', async () => {
    const { app, space } = await setup()
    const byName = await app.inject({ method: 'POST', url: '/run', headers: H, payload: { program: 'agent:echo@v1', args: { x: 1 } } })
    expect(byName.statusCode).toBe(200)
    expect(byName.json()).toMatchObject({ status: 'ok', value: { x: 1 }, error: null })
    expect(Object.keys(byName.json()).sort()).toEqual(['durationMs', 'error', 'fuelUsed', 'status', 'traceRef', 'value'])
    const src = await app.inject({
      method: 'POST',
      url: '/run',
      headers: H,
      payload: {
        source: 'async function main(a, svc) { return (await svc.query({ objectId: a.o, dataset: "agent_triggers" })).records.length }',
        args: { o: 'x' },
        spaceId: space.spaceId,
      },
    })
    expect(src.json()).toMatchObject({ status: 'failed' })
    const loop = await app.inject({ method: 'POST', url: '/run', headers: H, payload: { source: 'function main() { for (;;) {} }' } })
    expect(loop.json()).toMatchObject({ status: 'failed', error: expect.stringMatching(/fuel/) })
    const bad = await app.inject({ method: 'POST', url: '/run', headers: H, payload: { program: 'not a spec' } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error.code).toBe('request.invalid_field')
    const absent = await app.inject({ method: 'POST', url: '/run', headers: H, payload: { program: 'agent:missing@v9' } })
    expect(absent.statusCode).toBe(404)
    expect(absent.json().error.code).toBe('agents.program_not_found')
    const none = await app.inject({ method: 'POST', url: '/run', headers: H, payload: { args: {} } })
    expect(none.statusCode).toBe(400)
    expect(none.json().error.code).toBe('request.missing_field')
    const unknown = await app.inject({ method: 'POST', url: '/run', headers: H, payload: { program: 'agent:echo@v1', bogus: 1 } })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error.code).toBe('request.unknown_field')
  })

  it('carries the main API’s Host and Origin protections and answers 401 before an account boots', async () => {
    const { app } = await setup()
    expect((await app.inject({ method: 'GET', url: '/election', headers: { host: 'evil.example:7010' } })).statusCode).toBe(403)
    expect((await app.inject({ method: 'POST', url: '/run', headers: { ...H, origin: 'http://evil.example' }, payload: { program: 'agent:echo@v1' } })).statusCode).toBe(403)
    const idle = buildAgentControlApp(() => undefined)
    apps.push(idle)
    const res = await idle.inject({ method: 'GET', url: '/election', headers: H })
    expect(res.statusCode).toBe(401)
    expect(res.json().error.code).toBe('auth.required')
  })

  it('binds loopback only and listens on a port of its own', async () => {
    expect(() => controlHost('0.0.0.0')).toThrow(/loopback/)
    expect(() => controlHost('192.168.1.2')).toThrow(/loopback/)
    const app = buildAgentControlApp(() => undefined)
    apps.push(app)
    const port = await listenAgentControl(app, { port: 0 })
    const res = await fetch(`http://127.0.0.1:${port}/election`)
    expect(res.status).toBe(401)
  })
})
