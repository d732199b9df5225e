import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { AgentsHost } from '../../node/agents/host.ts'
import { runSandboxed } from '../../node/agents/sandbox.ts'
import { linkedAccountDevices } from '../../node/agents/live-devices.ts'
import type { P2PService } from '../../node/daemon/p2p-service.ts'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { identityOf, keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { buildAgentControlApp, controlHost } from '../../server/modules/agents.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { CHANGE_DERIVED_ID } from '../../sync/crdt/ops.ts'
import { TRIGGERS_DS } from '../../sync/modules/agents/record.ts'
import { anchorIdOf, readTrigger } from '../../sync/modules/agents/store.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'
import { addTrigger, agentAccount } from '../agents/helpers.ts'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c()
})

async function mine() {
  const a = await agentAccount()
  const host = new AgentsHost(a.account, a.env, 'peer-A', { timers: false })
  cleanup.push(() => host.stop())
  await host.start()
  return { ...a, host }
}

const sandbox = (source: string, fuel = 5000) =>
  runSandboxed({ source, args: {}, capabilities: {}, budgets: { fuel, memoryBytes: 8 << 20, timeoutMs: 30_000 }, env: systemEnv, runId: 'x' })

describe('a program escaping the sandbox', () => {
  it('finds no host object: no process, require, fetch, fs module, timers, and the Function constructor is the sandbox’s', async () => {
    const res = await sandbox(`function main() {
      const probes = {}
      for (const n of ['process', 'require', 'fetch', 'module', 'Buffer', 'setTimeout', 'setInterval', 'queueMicrotask', 'XMLHttpRequest', 'WebSocket', 'Deno', 'Bun', 'std', 'os'])
        probes[n] = typeof globalThis[n]
      probes.fnProcess = Function('return typeof process')()
      return probes
    }`)
    expect(Object.values(res.value as object).every((v) => v === 'undefined')).toBe(true)
    expect((await sandbox('async function main() { return await import("fs") }')).status).toBe('failed')
  })

  it('cannot pollute the host’s prototypes through what it returns', async () => {
    const res = await sandbox('function main() { return JSON.parse(\'{"__proto__": {"polluted": true}}\') }')
    expect(res.status).toBe('ok')
    const probe: Record<string, unknown> = {}
    expect(probe.polluted).toBeUndefined()
  })

  it('a huge return value and an endless log stay bounded', async () => {
    const big = await sandbox('function main() { return "x".repeat(1 << 20) }', 100_000)
    expect(big.value).toEqual({ truncated: true, bytes: (1 << 20) + 2 })
    const log = await sandbox('function main() { for (;;) console.log("spam spam spam spam") }', 200)
    expect(log.status).toBe('failed')
    // The log is cut at the trace bound (a trace past 4 KiB is stored as a file, docs/agents.md).
    expect(log.trace.join('').length).toBeLessThanOrEqual(AGENT_LIMITS.traceMaxBytes)
  })
})

describe('a program reaching another space', () => {
  it('query, modify, chat send and publish are bound to the trigger’s own space', async () => {
    const { host, space, account } = await mine()
    const other = await account.createSpace({ name: 'other' })
    const otherAnchor = anchorIdOf(other.id)
    const res = await host.run({
      spaceId: space.spaceId,
      source: `async function main(a, svc) {
      const out = {}
      for (const [name, arg] of [
        ['query', { spaceId: '${other.id}', objectId: '${otherAnchor}', dataset: 'agent_triggers' }],
        ['modify', { spaceId: '${other.id}', objectId: '${otherAnchor}', dataset: 'x', records: [] }],
        ['chatSend', { spaceId: '${other.id}', text: 'hi' }],
        ['publish', { spaceId: '${other.id}', type: 'x.y' }],
        ['chatSend', { objectId: '${otherAnchor}', text: 'into an object of another space' }],
      ]) { try { await svc[name](arg); out[name + (out[name] ? 2 : '')] = 'allowed' } catch (e) { out[name + (out[name] ? 2 : '')] = 'refused' } }
      return out
    }`,
    })
    expect(res.value).toEqual({ query: 'refused', modify: 'refused', chatSend: 'refused', publish: 'refused', chatSend2: 'refused' })
  })
})

describe('a member pointing this device at a program of theirs', () => {
  it('a record another account created is never adopted, even pinned to this device', async () => {
    const { host, space, account } = await mine()
    await space.replica.addMember(idFor(2), 'writer')
    const member = await SpaceEngine.open(await deps(2), space.spaceId, keyFor(2), { modules: DEFAULT_MODULES })
    await pushAll(space.replica, member.replica)
    await member.settled()
    await member.modify({
      objectId: anchorIdOf(space.spaceId),
      dataset: TRIGGERS_DS,
      records: [
        {
          id: 'evil',
          upsert: true,
          ops: [
            { type: '$set', path: '', value: { name: 'evil', kind: 'once', spec: { at: 1 }, program: 'agent:say@v1', args: { text: 'pwned' }, owner: 'peer-A', enabled: true } },
          ],
        },
      ],
    })
    await pushAll(member.replica, space.replica)
    await space.settled()
    expect((await readTrigger(space, 'evil')).value).toBeDefined()
    await host.tick()
    await host.scheduler.idle()
    expect(host.scheduler.registry.has(`${space.spaceId}/evil`)).toBe(false)
    expect(account.accountId).not.toBe(idFor(2))
  })

  it('a member’s edit of this account’s trigger is dropped at merge on every peer', async () => {
    const { space } = await mine()
    await addTrigger(space, 'mine', { kind: 'cron', spec: { every_s: 60 }, program: 'agent:noop@v1', owner: 'peer-A' })
    await space.replica.addMember(idFor(2), 'writer')
    const member = await SpaceEngine.open(await deps(2), space.spaceId, keyFor(2), { modules: DEFAULT_MODULES })
    await pushAll(space.replica, member.replica)
    await member.settled()
    await member.modify({ objectId: anchorIdOf(space.spaceId), dataset: TRIGGERS_DS, records: [{ id: 'mine', ops: [{ type: '$set', path: 'program', value: 'agent:say@v1' }] }] })
    await pushAll(member.replica, space.replica)
    await space.settled()
    expect((await readTrigger(space, 'mine')).value!.program).toBe('agent:noop@v1')
    expect((await readTrigger(member, 'mine')).value!.program).toBe('agent:noop@v1')
  })
})

describe('a member flooding a watched chat', () => {
  it('queues at most 16 fires per trigger while one runs; the rest are dropped (live, at most once)', async () => {
    const { host, space, chatId } = await mine()
    await addTrigger(space, 'watch', { kind: 'event', spec: { dataset: 'chat_messages', objectId: chatId }, program: 'agent:noop@v1', owner: 'peer-A', logRuns: false })
    await host.tick()
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let calls = 0
    const sched = host.scheduler as unknown as { runner: (...a: unknown[]) => Promise<unknown> }
    const real = sched.runner
    sched.runner = async (...a: unknown[]) => {
      calls++
      await gate
      return real(...a)
    }
    for (let i = 0; i < 40; i++) {
      const at = { $date: new Date(space.env.now()).toISOString() }
      await space.write(chatId, [
        { op: 'set', ds: 'chat_messages', id: CHANGE_DERIVED_ID, path: '', value: { creator: space.replica.me, createdAt: at, modifiedAt: at, text: 'flood ' + i } },
      ])
    }
    expect(calls).toBe(1)
    expect(host.scheduler.registry.get(space.spaceId + '/watch')!.queue).toHaveLength(16)
    release()
    await host.scheduler.idle()
    expect(calls).toBe(17)
  })
})

describe('a web page driving the control API', () => {
  it('is refused by the Host and Origin guards, and the listener binds loopback only', async () => {
    const { host } = await mine()
    const app: FastifyInstance = buildAgentControlApp(() => host)
    cleanup.push(() => app.close())
    const rebound = await app.inject({ method: 'POST', url: '/run', headers: { host: 'attacker.example' }, payload: { source: 'function main() {}' } })
    expect(rebound.statusCode).toBe(403)
    expect(rebound.json().error.code).toBe('request.forbidden_host')
    const cross = await app.inject({ method: 'POST', url: '/triggers/chat-watch/disable', headers: { host: '127.0.0.1:7010', origin: 'https://attacker.example' } })
    expect(cross.statusCode).toBe(403)
    expect(cross.json().error.code).toBe('request.forbidden_origin')
    expect(() => controlHost('0.0.0.0')).toThrow()
  })
})

describe('a connected peer tries to keep a claim of the agent election live', () => {
  it('only peers that proved this account count, each as the device whose key its link authenticated', async () => {
    const seed = (n: number) => new Uint8Array(32).fill(n)
    const peerOf = async (n: number) => peerIdFromPrivateKey(await generateKeyPairFromSeed('Ed25519', seed(n))).toString()
    const [sameAccount, otherAccount, unproved] = [await peerOf(1), await peerOf(2), await peerOf(3)]
    const proved = new Map([
      [sameAccount, 'acct'],
      [otherAccount, 'someone-else'],
    ])
    // The two parts of the P2P service the provider reads: connected peers and the identity each proved.
    const p2p = {
      scheduler: { connectedPeers: () => [sameAccount, otherAccount, unproved, 'not-a-peer-id'] },
      session: { identityOf: (p: string) => (p === 'not-a-peer-id' ? 'acct' : proved.get(p)) },
    } as unknown as P2PService
    const live = linkedAccountDevices(p2p, 'acct')()
    expect([...live]).toEqual([identityOf(keyPairFromSeed(seed(1)).publicKey)])
  })
})
