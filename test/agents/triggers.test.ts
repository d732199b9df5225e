import { afterEach, describe, expect, it } from 'vitest'
import { AgentsHost } from '../../node/agents/host.ts'
import { readTrigger as readDef, RUNS_DS } from '../../sync/modules/agents/record.ts'
import { readTrigger, runsOf, writeTrigger, createTrigger, anchorIdOf } from '../../sync/modules/agents/store.ts'
import { runQuery } from '../../sync/query/snapshot.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import { instant } from '../../sync/space/rows.ts'
import { CHANGE_DERIVED_ID } from '../../sync/crdt/ops.ts'
import { addProgram, addTrigger, agentAccount, T0 } from './helpers.ts'
import { dropTraceFiles } from '../../node/agents/traces.ts'
import { filesModule } from '../../sync/modules/files/module.ts'

const hosts: AgentsHost[] = []
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.stop()
})

async function setup(peer = 'peer-A') {
  const a = await agentAccount()
  const host = new AgentsHost(a.account, a.env, peer, { timers: false })
  hosts.push(host)
  await host.start()
  return { ...a, host }
}

const rec = async (space: SpaceEngine, id: string) => readDef(id, (await readTrigger(space, id)).value ?? {})
const tick = async (h: AgentsHost) => {
  await h.tick()
  await h.scheduler.idle()
}

describe('cron triggers: armed strictly forward, missed occurrences never fire', () => {
  it('every_s fires once when due, skips the missed periods, and re-arms forward after a restart', async () => {
    const { space, host, env, account } = await setup()
    await addTrigger(space, 'c1', { kind: 'cron', spec: { every_s: 10 }, program: 'agent:noop@v1' })
    await tick(host)
    expect((await rec(space, 'c1')).runCount).toBe(0)
    env.set(T0 + 35_000) // periods at 10 s, 20 s, 30 s have passed: one fire, not three
    await tick(host)
    expect((await rec(space, 'c1')).runCount).toBe(1)
    await tick(host)
    expect((await rec(space, 'c1')).runCount).toBe(1)
    expect(host.scheduler.registry.get(`${space.spaceId}/c1`)!.nextAt).toBe(T0 + 40_000)

    // A restart: a new host on the same data, much later. Nothing missed fires; the next occurrence does.
    await host.stop()
    env.set(T0 + 95_000)
    const again = new AgentsHost(account, env, 'peer-A', { timers: false })
    hosts.push(again)
    await again.start()
    await tick(again)
    expect((await rec(space, 'c1')).runCount).toBe(1)
    env.set(T0 + 100_000)
    await tick(again)
    const r = await rec(space, 'c1')
    expect(r.runCount).toBe(2)
    expect(r.lastStatus).toBe('ok')
  })

  it('a cron expression string fires at its next minute; {cron} works the same', async () => {
    const { space, host, env } = await setup()
    await addTrigger(space, 'c2', { kind: 'cron', spec: '* * * * *', program: 'agent:noop@v1' })
    await addTrigger(space, 'c3', { kind: 'cron', spec: { cron: '*/2 * * * *' }, program: 'agent:noop@v1' })
    await tick(host)
    const next = host.scheduler.registry.get(`${space.spaceId}/c2`)!.nextAt!
    expect(next).toBeGreaterThan(T0)
    expect(next % 60_000).toBe(0)
    env.set(next)
    await tick(host)
    expect((await rec(space, 'c2')).runCount).toBe(1)
  })

  it('a definition edit re-arms forward from the edit', async () => {
    const { space, host, env } = await setup()
    await addTrigger(space, 'c4', { kind: 'cron', spec: { every_s: 10 }, program: 'agent:noop@v1' })
    await tick(host)
    env.set(T0 + 5_000)
    await writeTrigger(space, 'c4', { spec: { every_s: 100 } })
    await tick(host)
    expect(host.scheduler.registry.get(`${space.spaceId}/c4`)!.nextAt).toBe(T0 + 100_000)
  })
})

describe('once triggers', () => {
  it('a past `at` fires late on the next tick, then auto-disables; rewriting the definition re-arms it', async () => {
    const { space, host, env } = await setup()
    const def = { kind: 'once', spec: { at: (T0 - 3_600_000) / 1000 }, program: 'agent:echo@v1', args: { n: 1 } }
    await addTrigger(space, 'o1', def)
    await tick(host)
    let r = await rec(space, 'o1')
    expect(r).toMatchObject({ runCount: 1, enabled: false, lastStatus: 'ok', lastRunAt: T0 })
    env.advance(1000)
    await tick(host)
    expect((await rec(space, 'o1')).runCount).toBe(1)
    // A rewrite at the empty path drops lastRunAt (its consumed state): armed again.
    await createTrigger(space, 'o1', { name: 'o1', owner: 'peer-A', enabled: true, logRuns: false, limits: {}, ...def })
    await tick(host)
    r = await rec(space, 'o1')
    expect(r.lastRunAt).toBe(T0 + 1000)
    expect(r.enabled).toBe(false)
  })

  it('a future `at` waits for it', async () => {
    const { space, host, env } = await setup()
    await addTrigger(space, 'o2', { kind: 'once', spec: { at: (T0 + 60_000) / 1000 }, program: 'agent:noop@v1' })
    await tick(host)
    expect((await rec(space, 'o2')).runCount).toBe(0)
    env.set(T0 + 60_000)
    await tick(host)
    expect((await rec(space, 'o2')).runCount).toBe(1)
  })
})

describe('the circuit breaker', () => {
  it('maxConsecutiveFailures failures auto-disable; enable resets it and re-arms', async () => {
    const { space, host, env } = await setup()
    await addProgram(space, 'fail@v1', 'function main() { throw new Error("bad input") }')
    await addTrigger(space, 'b1', { kind: 'cron', spec: { every_s: 10 }, program: 'fail@v1', maxConsecutiveFailures: 2 })
    await tick(host)
    for (let i = 1; i <= 3; i++) {
      env.set(T0 + i * 10_000)
      await tick(host)
    }
    let r = await rec(space, 'b1')
    expect(r).toMatchObject({ enabled: false, lastStatus: 'auto_disabled', runCount: 2 })
    const runs = await runsOf(space, 'b1')
    expect(runs.map((x) => x.status)).toEqual(['failed', 'failed'])
    expect(runs[0].error).toBe('bad input')

    await host.enable('b1')
    r = await rec(space, 'b1')
    expect(r.enabled).toBe(true)
    expect(r.lastStatus).toBeUndefined()
    env.set(T0 + 40_000)
    await tick(host)
    r = await rec(space, 'b1')
    expect(r).toMatchObject({ enabled: true, lastStatus: 'failed', runCount: 3 })
    expect(host.scheduler.registry.get(`${space.spaceId}/b1`)!.failures).toBe(1)
  })
})

describe('health markers', () => {
  it('invalid_spec and unsupported_source are stamped and self-clear once fixed', async () => {
    const { space, host, env } = await setup()
    await addTrigger(space, 'm1', { kind: 'cron', spec: 'not a cron', program: 'agent:noop@v1' })
    await addTrigger(space, 'm2', { kind: 'once', spec: { at: 'soon' }, program: 'agent:noop@v1' })
    await addTrigger(space, 'm3', { kind: 'event', spec: { dataset: 'tasks', objectId: 'x' }, program: 'agent:noop@v1' })
    await addTrigger(space, 'm4', { kind: 'cron', spec: '0 0 1 1 * 2001', program: 'agent:noop@v1' })
    await tick(host)
    expect((await rec(space, 'm1')).lastStatus).toBe('invalid_spec')
    expect((await rec(space, 'm2')).lastStatus).toBe('invalid_spec')
    expect((await rec(space, 'm3')).lastStatus).toBe('unsupported_source')
    expect((await rec(space, 'm4')).lastStatus).toBe('invalid_spec')
    await writeTrigger(space, 'm1', { spec: { every_s: 10 } })
    await writeTrigger(space, 'm3', { spec: { dataset: 'chat_messages', objectId: 'x' } })
    await tick(host)
    expect((await rec(space, 'm1')).lastStatus).toBeUndefined()
    expect((await rec(space, 'm3')).lastStatus).toBeUndefined()
    // The first real run overwrites nothing left: it writes its own status.
    env.set(T0 + 10_000)
    await tick(host)
    expect((await rec(space, 'm1')).lastStatus).toBe('ok')
  })
})

describe('ownership: pinning, floating, eviction, tombstones, reconcile', () => {
  it('a pinned record runs only on its device; repinning moves it within a tick; an unowned one is stamped by the active device', async () => {
    const a = await setup('peer-A')
    // B is linked to A (what its P2P side would report), so A's earlier claim is live for it.
    const b = new AgentsHost(a.account, a.env, 'peer-B', { timers: false, liveDevices: () => new Set(['peer-A']) })
    hosts.push(b)
    await b.start()
    const { space } = a
    await addTrigger(space, 'p1', { kind: 'cron', spec: { every_s: 10 }, program: 'agent:noop@v1', owner: 'peer-B' })
    await tick(a.host)
    await tick(b)
    expect(a.host.scheduler.registry.has(`${space.spaceId}/p1`)).toBe(false)
    expect(b.scheduler.registry.has(`${space.spaceId}/p1`)).toBe(true)
    await writeTrigger(space, 'p1', { owner: 'peer-A' })
    await tick(a.host)
    await tick(b)
    expect(a.host.scheduler.registry.has(`${space.spaceId}/p1`)).toBe(true)
    expect(b.scheduler.registry.has(`${space.spaceId}/p1`)).toBe(false)

    // Floating: the election winner (peer-A claimed first) adopts and stamps its owner.
    expect((await a.host.electionView()).active).toBe(true)
    expect((await b.electionView()).active).toBe(false)
    await addTrigger(space, 'f1', { kind: 'cron', spec: { every_s: 10 }, program: 'agent:noop@v1' })
    await tick(b)
    expect(b.scheduler.registry.has(`${space.spaceId}/f1`)).toBe(false)
    await tick(a.host)
    expect((await rec(space, 'f1')).owner).toBe('peer-A')
  })

  it('a deleted id is evicted and stays tombstoned: recreating it under the same id is not adopted', async () => {
    const { space, host } = await setup()
    await addTrigger(space, 'd1', { kind: 'cron', spec: { every_s: 10 }, program: 'agent:noop@v1' })
    await tick(host)
    expect(host.scheduler.registry.has(`${space.spaceId}/d1`)).toBe(true)
    await space.deleteRecords({ objectId: anchorIdOf(space.spaceId), dataset: 'agent_triggers', recordIds: ['d1'] })
    await tick(host)
    expect(host.scheduler.registry.has(`${space.spaceId}/d1`)).toBe(false)
    await addTrigger(space, 'd1', { kind: 'cron', spec: { every_s: 10 }, program: 'agent:noop@v1' })
    await tick(host)
    expect(host.scheduler.registry.has(`${space.spaceId}/d1`)).toBe(false)
  })

  it('a registry-only edit is reverted by the next reconcile tick', async () => {
    const { space, host } = await setup()
    await addTrigger(space, 'r1', { kind: 'cron', spec: { every_s: 10 }, program: 'agent:noop@v1' })
    await tick(host)
    const e = host.scheduler.registry.get(`${space.spaceId}/r1`)!
    e.def.enabled = false
    e.def.program = 'agent:echo@v1'
    await tick(host)
    expect(e.def.enabled).toBe(true)
    expect(e.def.program).toBe('agent:noop@v1')
  })
})

describe('event triggers on chat messages', () => {
  it('a new message fires with the event; the agent’s own messages and messages from before arming never do', async () => {
    const { space, host, chatId, env } = await setup()
    const send = async (text: string, extra = {}, at = env.now()) => {
      const res = await space.write(chatId, [
        { op: 'set', ds: 'chat_messages', id: CHANGE_DERIVED_ID, path: '', value: { creator: space.replica.me, createdAt: instant(at), modifiedAt: instant(at), text, ...extra } },
      ])
      return res.recordIds[0]
    }
    await addTrigger(space, 'e1', { kind: 'event', spec: { dataset: 'chat_messages', objectId: chatId }, program: 'agent:echo@v1' })
    await tick(host)
    env.advance(1000)
    const m1 = await send('hello agent')
    await host.scheduler.idle()
    await send('from the agent', { agent: { name: 'svc-agent', done: true } })
    await send('written while the owner was down', {}, T0 - 60_000)
    await host.scheduler.idle()
    const r = await rec(space, 'e1')
    expect(r.runCount).toBe(1)
    const runs = await runsOf(space, 'e1')
    expect(runs).toHaveLength(1)
    // trigger_runs are readable as dataset agent_trigger_runs, filter {triggerId}, sort -ts.
    const q = runQuery(await space.datasetSource(anchorIdOf(space.spaceId), RUNS_DS), { filter: { triggerId: 'e1' }, sort: ['-ts'] })
    expect(q.records.map((x) => x.traceRef)).toEqual([runs[0].traceRef])
    expect(m1).toBeTruthy()
  })

  it('keeps only the last N runs of a trigger', async () => {
    const { space, host, env } = await setup()
    await addTrigger(space, 'k1', { kind: 'cron', spec: { every_s: 1 }, program: 'agent:noop@v1' })
    await tick(host)
    for (let i = 1; i <= 55; i++) {
      env.set(T0 + i * 1000)
      await tick(host)
    }
    expect((await rec(space, 'k1')).runCount).toBe(55)
    expect(await runsOf(space, 'k1', 1000)).toHaveLength(50)
  }, 60_000)
})

describe('run traces (chat.md trigger_runs: inline for small traces, file attachment for large)', () => {
  const readAll = async (body: AsyncIterable<Uint8Array>) => {
    const parts: Uint8Array[] = []
    for await (const p of body) parts.push(p)
    return Buffer.concat(parts).toString('utf8')
  }

  it('a small trace is inline; a large one is a text file on the anchor holding every line; keep-last-N deletes the files of dropped runs', async () => {
    const { space, host, env, account } = await setup()
    await addProgram(space, 'quiet@v1', 'function main() { console.log("one"); console.log("two", {n: 2}); return 1 }')
    // About 20 KiB of lines, past the 4 KiB inline bound: nothing is cut.
    await addProgram(space, 'loud@v1', 'function main() { for (let i = 0; i < 1000; i++) console.log("line " + i + " " + "x".repeat(10)); return 1 }')
    await addTrigger(space, 'q1', { kind: 'cron', spec: { every_s: 10 }, program: 'quiet@v1' })
    await addTrigger(space, 'l1', { kind: 'cron', spec: { every_s: 10 }, program: 'loud@v1', limits: { fuelPerRun: 200_000 } })
    await tick(host)
    env.set(T0 + 10_000)
    await tick(host)

    const [quiet] = await runsOf(space, 'q1')
    expect(quiet).toMatchObject({ status: 'ok', trace: ['one', 'two {"n":2}'] })
    expect(quiet).not.toHaveProperty('traceFile')

    const [loud] = await runsOf(space, 'l1')
    expect(loud.status).toBe('ok')
    expect(loud).not.toHaveProperty('trace')
    expect(loud).not.toHaveProperty('traceTruncated')
    expect(loud.traceRef).toBe(loud.id)
    const m = /^svc:\/\/f\/([^/]+)\/([^/]+)$/.exec(loud.traceFile!)
    expect(m?.[1]).toBe(space.spaceId)
    const files = account.services.of(filesModule)
    const info = await files.info(space.spaceId, m![2])
    expect(info).toMatchObject({ objectId: anchorIdOf(space.spaceId), mime: 'text/plain' })
    const expected = Array.from({ length: 1000 }, (_, i) => `line ${i} ${'x'.repeat(10)}`).join('\n')
    expect(loud.traceBytes).toBe(Buffer.byteLength(expected))
    const { body } = await files.read(space.spaceId, m![2], 0, expected.length - 1)
    expect(await readAll(body)).toBe(expected)

    // Runs dropped by keep-last-N take their trace files with them.
    await dropTraceFiles(account, space, [loud])
    await expect(files.info(space.spaceId, m![2])).rejects.toMatchObject({ code: 'file.not_found' })
  })

  it('a trace past the capture bound is cut and says so', async () => {
    const { space, host, env } = await setup()
    // 1.5 M characters of log, past the 1 MiB the sandbox keeps.
    await addProgram(space, 'flood@v1', 'function main() { const s = "y".repeat(100000); for (let i = 0; i < 15; i++) console.log(s); return 1 }')
    await addTrigger(space, 'f1', { kind: 'cron', spec: { every_s: 10 }, program: 'flood@v1', limits: { fuelPerRun: 200_000 } })
    await tick(host)
    env.set(T0 + 10_000)
    await tick(host)
    const [run] = await runsOf(space, 'f1')
    expect(run).toMatchObject({ status: 'ok', traceTruncated: true, traceFile: expect.stringMatching(/^svc:\/\/f\//) })
    expect(run.traceBytes).toBeLessThanOrEqual(1024 * 1024 + 15)
  })
})
