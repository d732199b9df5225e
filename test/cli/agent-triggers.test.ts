import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { AgentsHost } from '../../node/agents/host.ts'
import { buildAgentControlApp, listenAgentControl } from '../../server/modules/agents.ts'
import { anchorIdOf as cliAnchorIdOf } from '../../server/cli/commands/agent-triggers.ts'
import { anchorIdOf } from '../../sync/modules/agents/store.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { bundleRootId } from '../../sync/space/bundles/model.ts'
import { bootApp, listen, type Booted } from '../routes/helpers.ts'
import { svcAt } from './helpers.ts'

/*
 * `svc agents trigger ls|create|edit|rm` (issue 39 item 6): trigger records written through the
 * main API, then adopted by a real agents host on the same account, read back through the
 * control API (`svc agents triggers`).
 */
let b: Booted
let url: string
let control: string
let space: string
let host: AgentsHost
let controlApp: FastifyInstance
beforeAll(async () => {
  b = await bootApp()
  url = await listen(b.app)
  space = (await svc('spaces', 'create', 'Agents')).out.trim()
  host = new AgentsHost(b.engine.account(), systemEnv, 'peer-A', { timers: false })
  controlApp = buildAgentControlApp(() => host)
  control = `http://127.0.0.1:${await listenAgentControl(controlApp, { port: 0 })}`
}, 60_000)
afterAll(async () => {
  await host?.stop()
  await controlApp?.close()
  await b?.close()
})

const svc = (...args: string[]) => svcAt(url, args)
const ctl = (...args: string[]) => svcAt(url, ['agents', ...args], { env: { SVC_AGENTS_URL: control } })
const ls = async () => (await svc('agents', 'trigger', 'ls', space, '--json')).json().triggers as Array<Record<string, any>>

describe('svc agents trigger', () => {
  it('says where the anchor comes from while a space has none', async () => {
    expect(cliAnchorIdOf(space)).toBe(anchorIdOf(space))
    expect((await svc('agents', 'trigger', 'ls', space)).out).toBe('(none)\n')
    const early = await svc('agents', 'trigger', 'create', space, 'nightly', '--program', 'agent:noop@v1', '--cron', '0 3 * * *')
    expect(early.code).toBe(1)
    expect(early.err).toContain('no agent triggers anchor yet')
    expect(early.err).toContain('svc catalog setup general-chat')
  })

  it('create (cron, every, at, chat), ls, edit and rm; the agents host adopts what they write', async () => {
    expect((await svc('catalog', 'setup', 'general-chat', space)).code).toBe(0)
    await host.start()
    await host.tick()
    expect((await ls()).map((t) => t.id)).toEqual(['chat-watch'])

    const created = await svc('agents', 'trigger', 'create', space, 'nightly', '--program', 'agent:noop@v1', '--cron', '0 3 * * *', '--args', '{"n":1}')
    expect(created.code).toBe(0)
    expect(created.json().recordIds).toEqual(['nightly'])
    expect((await svc('agents', 'trigger', 'create', space, 'tick', '--program', 'agent:noop@v1', '--every', '60', '--enabled', 'false')).code).toBe(0)
    expect((await svc('agents', 'trigger', 'create', space, 'later', '--program', 'agent:noop@v1', '--at', '2030-01-01T00:00:00Z', '--name', 'New year')).code).toBe(0)
    expect((await svc('agents', 'trigger', 'create', space, 'ev', '--program', 'agent:noop@v1', '--chat', 'general', '--log-runs', 'false')).code).toBe(0)
    const rows = Object.fromEntries((await ls()).map((t) => [t.id, t]))
    expect(rows.nightly).toMatchObject({ name: 'nightly', kind: 'cron', spec: '0 3 * * *', program: 'agent:noop@v1', args: { n: 1 }, owner: '', enabled: true, logRuns: true })
    expect(rows.tick).toMatchObject({ kind: 'cron', spec: { every_s: 60 }, enabled: false })
    expect(rows.later).toMatchObject({ name: 'New year', kind: 'once', spec: { at: 1893456000 } })
    expect(rows.ev).toMatchObject({ kind: 'event', spec: { dataset: 'chat_messages', objectId: bundleRootId(space, 'system:general-chat/v1') }, logRuns: false })
    const table = (await svc('agents', 'trigger', 'ls', space)).out
    expect(table).toMatch(/^ID\s+NAME\s+KIND\s+SPEC\s+PROGRAM\s+OWNER\s+ENABLED\s+LAST STATUS$/m)
    expect(table).toMatch(/^nightly\s+nightly\s+cron\s+0 3 \* \* \*\s+agent:noop@v1\s+\(floating\)\s+yes$/m)
    expect(table).toMatch(/^tick\s+tick\s+cron\s+\{"every_s":60\}\s+agent:noop@v1\s+\(floating\)\s+no$/m)

    // The agents host adopts them: they are valid trigger records, not just rows.
    await host.tick()
    const registry = (await ctl('triggers')).json().triggers as Array<{ id: string; lastStatus?: string; stats: { nextAt: number | null } }>
    expect(registry.map((t) => t.id).sort()).toEqual(['chat-watch', 'ev', 'later', 'nightly', 'tick'])
    // armed: the cron's next 03:00 UTC; no evaluation marker (invalid_spec, unsupported_source) on any
    expect(new Date(registry.find((t) => t.id === 'nightly')!.stats.nextAt!).toISOString()).toMatch(/T03:00:00\.000Z$/)
    expect(registry.filter((t) => t.id !== 'chat-watch').map((t) => t.lastStatus)).toEqual([undefined, undefined, undefined, undefined])

    // edit changes only what it is given
    expect((await svc('agents', 'trigger', 'edit', space, 'nightly', '--cron', '0 4 * * *', '--name', 'Nightly', '--owner', 'peer-A')).code).toBe(0)
    expect((await ls()).find((t) => t.id === 'nightly')).toMatchObject({ name: 'Nightly', kind: 'cron', spec: '0 4 * * *', owner: 'peer-A', args: { n: 1 }, enabled: true })
    await host.tick()
    expect((await ctl('triggers', 'nightly', '--space', space)).json()).toMatchObject({ spec: '0 4 * * *', owner: 'peer-A' })
    expect((await svc('agents', 'trigger', 'edit', space, 'tick', '--enabled', 'true', '--kind', 'cron', '--spec', '{"every_s":30}')).code).toBe(0)
    expect((await ls()).find((t) => t.id === 'tick')).toMatchObject({ spec: { every_s: 30 }, enabled: true })

    // rm deletes the record; the host evicts it
    expect((await svc('agents', 'trigger', 'rm', space, 'tick')).code).toBe(0)
    expect((await ls()).map((t) => t.id)).not.toContain('tick')
    await host.tick()
    expect((await ctl('triggers', 'tick', '--space', space)).err).toContain('404 agents.trigger_not_found')
  })

  it('refuses what would not make sense, naming why', async () => {
    const cases: Array<[string[], string]> = [
      [['create', space, 'nightly', '--program', 'p@v1', '--cron', '* * * * *'], 'trigger nightly exists; change it with svc agents trigger edit'],
      [['create', space, 'x', '--cron', '* * * * *'], 'missing --program SPEC'],
      [['create', space, 'x', '--program', 'p@v1'], 'say when it fires'],
      [['create', space, 'x', '--program', 'p@v1', '--cron', '* * * * *', '--every', '5'], 'give one of --cron, --every, --at, --chat or --kind'],
      [['create', space, 'x', '--program', 'p@v1', '--at', 'someday'], '--at takes an ISO date or epoch seconds'],
      [['create', space, 'x', '--program', 'p@v1', '--cron', '* * * * *', '--enabled', 'maybe'], '--enabled takes true or false'],
      [['create', space, 'x', '--program', 'p@v1', '--kind', 'cron'], '--kind needs --spec JSON'],
      [['edit', space, 'nope', '--name', 'x'], `no trigger nope in space ${space}`],
      [['edit', space, 'nightly'], 'nothing to change'],
      [['rm', space, 'nope'], `no trigger nope in space ${space}`],
      [['rm', space], 'missing ID'],
      [['frob', space], 'unknown subcommand frob'],
    ]
    for (const [args, what] of cases) {
      const r = await svc('agents', 'trigger', ...args)
      expect({ args, code: r.code, err: r.err.split('\n')[0] }).toEqual({ args, code: 1, err: expect.stringContaining(what) })
    }
    expect((await ctl('triggers', '--cron', '* * * * *')).err).toContain('--cron belongs to svc agents trigger')
  })
})
