import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { AgentsHost } from '../../node/agents/host.ts'
import { buildAgentControlApp, listenAgentControl } from '../../server/modules/agents.ts'
import { main } from '../../server/cli/dispatch.ts'
import { memoryIO } from '../server/process.ts'
import { addTrigger, agentAccount } from './helpers.ts'

const closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of closers.splice(0)) await c()
})

async function setup() {
  const a = await agentAccount()
  const host = new AgentsHost(a.account, a.env, 'peer-A', { timers: false })
  await host.start()
  const app: FastifyInstance = buildAgentControlApp(() => host)
  closers.push(
    () => host.stop(),
    () => app.close(),
  )
  const port = await listenAgentControl(app, { port: 0 })
  const svc = async (...args: string[]) => {
    const m = memoryIO('', { SVC_AGENTS_URL: `http://127.0.0.1:${port}` })
    const code = await main(['agents', ...args], m.io)
    return { code, out: m.out(), err: m.err() }
  }
  return { ...a, host, svc }
}

describe('svc agents', () => {
  it('triggers, runs, enable, disable and run go to the control API', async () => {
    const { space, host, svc } = await setup()
    await addTrigger(space, 'c1', { kind: 'cron', spec: { every_s: 10 }, program: 'agent:noop@v1' })
    await host.tick()
    const list = await svc('triggers')
    expect(list.code).toBe(0)
    expect(JSON.parse(list.out).triggers.map((t: { id: string }) => t.id)).toContain('c1')
    expect(JSON.parse((await svc('disable', 'c1')).out).enabled).toBe(false)
    expect(JSON.parse((await svc('enable', 'c1')).out).enabled).toBe(true)
    expect(JSON.parse((await svc('runs', 'c1')).out).runs).toEqual([])
    const run = await svc('run', '--program', 'agent:echo@v1', '--args', '{"a":1}')
    expect(JSON.parse(run.out)).toMatchObject({ status: 'ok', value: { a: 1 } })
    const missing = await svc('triggers', 'nope')
    expect(missing.code).toBe(1)
    expect(JSON.parse((await svc('election')).out).active).toBe(true)
  })

  it('usage errors exit 1; an unreachable control API exits 3', async () => {
    const m = memoryIO('', { SVC_AGENTS_URL: 'http://127.0.0.1:9' })
    expect(await main(['agents', 'run'], m.io)).toBe(1)
    expect(await main(['agents', 'triggers'], m.io)).toBe(3)
  })
})
