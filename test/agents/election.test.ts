import { afterEach, describe, expect, it } from 'vitest'
import { AgentsHost } from '../../node/agents/host.ts'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { CHANGE_DERIVED_ID, type JsonObject } from '../../sync/crdt/ops.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { instant } from '../../sync/space/rows.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { keyFor, pushAll } from '../helpers.ts'
import { fakeModel } from './fake-model.ts'
import { addTrigger, agentAccount, T0 } from './helpers.ts'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c()
})

/** Two devices of one account on one virtual clock; their tech spaces and the shared space sync when the test says. */
async function twoDevices() {
  const model = await fakeModel((q) => `re: ${q}`)
  cleanup.push(model.close)
  const a = await agentAccount()
  const env = a.env
  const devB = await AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto: await defaultCryptoProvider(), env, accountKey: keyFor(1), modules: DEFAULT_MODULES })
  await a.account.devices.register('peer-A')
  await devB.devices.register('peer-B')
  const syncTech = async () => {
    await pushAll(a.account.tech.replica, devB.tech.replica)
    await pushAll(devB.tech.replica, a.account.tech.replica)
    await devB.tech.settled()
    await a.account.tech.settled()
  }
  await syncTech()
  const spaceB = await devB.adopt(a.space.spaceId)
  const syncSpace = async () => {
    await pushAll(a.space.replica, spaceB.replica)
    await pushAll(spaceB.replica, a.space.replica)
    await spaceB.settled()
    await a.space.settled()
  }
  await syncSpace()
  // What each device's P2P side would report: the other device linked now (tests cut the link).
  const linksA = new Set(['peer-B'])
  const linksB = new Set(['peer-A'])
  const opts = { timers: false, model: { url: model.url, model: 'fake' } } as const
  const hostA = new AgentsHost(a.account, env, 'peer-A', { ...opts, liveDevices: () => linksA })
  const hostB = new AgentsHost(devB, env, 'peer-B', { ...opts, liveDevices: () => linksB })
  cleanup.push(
    () => hostA.stop(),
    () => hostB.stop(),
  )
  await hostA.start()
  env.advance(1)
  await hostB.start()
  await syncTech()
  return { ...a, devB, spaceB, hostA, hostB, syncTech, syncSpace, model, linksA, linksB }
}

const tick = async (h: AgentsHost) => {
  await h.tick()
  await h.scheduler.idle()
}

async function send(space: SpaceEngine, chatId: string, text: string) {
  const at = instant(space.env.now())
  const res = await space.write(chatId, [
    { op: 'set', ds: 'chat_messages', id: CHANGE_DERIVED_ID, path: '', value: { creator: space.replica.me, createdAt: at, modifiedAt: at, text } },
  ])
  return res.recordIds[0]
}

const answers = async (space: SpaceEngine, chatId: string) =>
  ((await space.datasetDocs(chatId, 'chat_messages')) as JsonObject[]).filter((d) => (d.agent as JsonObject | undefined)?.name === 'svc-agent').map((d) => d.replyToMessageId)

describe('the agent election between two devices of one account', () => {
  it('the first claimant is active, the other stands by; when its link to the active drops the standby takes over and answers the backlog', async () => {
    const { hostA, hostB, env, space, spaceB, chatId, syncTech, syncSpace, linksA, linksB } = await twoDevices()
    const [va, vb] = [await hostA.electionView(), await hostB.electionView()]
    expect(va).toMatchObject({ active: true, winner: 'peer-A', state: 'active' })
    expect(vb).toMatchObject({ active: false, winner: 'peer-A', state: 'standby' })

    await tick(hostA)
    await syncSpace()
    await tick(hostB)
    expect(hostA.scheduler.registry.has(`${space.spaceId}/chat-watch`)).toBe(true)
    expect(hostB.scheduler.registry.has(`${space.spaceId}/chat-watch`)).toBe(false)

    env.advance(1000)
    const m1 = await send(space, chatId, 'one')
    await hostA.scheduler.idle()
    await syncSpace()
    await hostB.scheduler.idle()
    expect(await answers(spaceB, chatId)).toEqual([m1])

    // Device A goes away (its link to B drops, no withdrawal). A message arrives on B meanwhile:
    // B is standby within the grace and does not answer it.
    linksB.delete('peer-A')
    env.advance(1000)
    const m2 = await send(spaceB, chatId, 'two')
    await hostB.scheduler.idle()
    expect(await answers(spaceB, chatId)).toEqual([m1])
    expect(await hostB.electionView()).toMatchObject({ active: false, winner: 'peer-A' })
    env.advance(AGENT_LIMITS.liveMs + 1000)
    expect(await hostB.electionView()).toMatchObject({ active: true, winner: 'peer-B' })
    // The takeover adopts chat-watch and answers the unanswered backlog (m2), once.
    await tick(hostB)
    expect((await answers(spaceB, chatId)).sort()).toEqual([m1, m2].sort())
    await tick(hostB)
    expect(await answers(spaceB, chatId)).toHaveLength(2)
    // A message arriving from another replica over sync fires too (the change feed carries ingests).
    env.advance(1000)
    const m3 = await send(space, chatId, 'three, from elsewhere')
    await syncSpace()
    await hostB.scheduler.idle()
    expect((await answers(spaceB, chatId)).sort()).toEqual([m1, m2, m3].sort())
    // A restarts later: it claims anew and stays standby (B keeps the slot).
    await hostA.stop()
    const again = new AgentsHost(hostA.account, env, 'peer-A', { timers: false, liveDevices: () => linksA })
    cleanup.push(() => again.stop())
    await again.start()
    await syncTech()
    expect(await again.electionView()).toMatchObject({ active: false, winner: 'peer-B' })
  })

  it('a device starting while no other device holds the slot answers no backlog, whoever claimed before (docs/agents.md)', async () => {
    const { hostA, hostB, env, space, spaceB, devB, chatId, syncTech, syncSpace, model } = await twoDevices()
    await tick(hostA)
    await syncSpace()
    env.advance(1000)
    const m1 = await send(space, chatId, 'one')
    await hostA.scheduler.idle()
    await syncSpace()
    expect(await answers(spaceB, chatId)).toEqual([m1])
    // Both stop (A cleanly: its claim is withdrawn); messages arrive on B while no agent runs.
    await hostA.stop()
    await hostB.stop()
    await syncTech()
    env.advance(7 * 60_000)
    await send(spaceB, chatId, 'while no agent ran')
    env.advance(10 * 60_000)
    // B's agent starts alone. A claimed before it, but B never stood behind a live winner: this
    // is a start, not a takeover, and it answers nothing from before it started.
    const alone = new AgentsHost(devB, env, 'peer-B', { timers: false, model: { url: model.url, model: 'fake' } })
    cleanup.push(() => alone.stop())
    await alone.start()
    expect(await alone.electionView()).toMatchObject({ active: true, winner: 'peer-B' })
    await tick(alone)
    await tick(alone)
    expect(await answers(spaceB, chatId)).toEqual([m1])
    // It answers live: a message after its start fires.
    env.advance(1000)
    const m3 = await send(spaceB, chatId, 'live')
    await alone.scheduler.idle()
    expect((await answers(spaceB, chatId)).sort()).toEqual([m1, m3].sort())
  })

  it('a standby still fires triggers pinned to it; a pruned device fires nothing', async () => {
    const { hostB, hostA, space, spaceB, env, syncTech, syncSpace, account } = await twoDevices()
    await addTrigger(space, 'pinned-b', { kind: 'cron', spec: { every_s: 10 }, program: 'agent:noop@v1', owner: 'peer-B' })
    await syncSpace()
    await tick(hostB)
    expect((await hostB.electionView()).state).toBe('standby')
    expect(hostB.scheduler.registry.has(`${spaceB.spaceId}/pinned-b`)).toBe(true)
    env.set(T0 + 10_000)
    await tick(hostB)
    await syncSpace()
    const rec = (await spaceB.datasetDocs((await import('../../sync/modules/agents/store.ts')).anchorIdOf(space.spaceId), 'agent_triggers')).find((d) => d.id === 'pinned-b')!
    expect(rec.runCount).toBe(1)

    await account.devices.prune('peer-B', 'peer-A')
    await syncTech()
    expect((await hostB.electionView()).state).toBe('pruned')
    await tick(hostB)
    expect(hostB.scheduler.registry.has(`${spaceB.spaceId}/pinned-b`)).toBe(false)
    expect(hostA.peerId).toBe('peer-A')
  })
})

describe('liveness comes from links, not stored heartbeats', () => {
  it('a link blip shorter than the grace does not move the slot; a clean stop hands it over at once', async () => {
    const { hostA, hostB, env, syncTech, linksB } = await twoDevices()
    expect(await hostB.electionView()).toMatchObject({ active: false, winner: 'peer-A' })
    linksB.delete('peer-A')
    env.advance(AGENT_LIMITS.liveMs - 1000)
    expect(await hostB.electionView()).toMatchObject({ active: false, winner: 'peer-A' })
    linksB.add('peer-A')
    expect(await hostB.electionView()).toMatchObject({ active: false, winner: 'peer-A' })
    // The grace runs from when the link was last seen, so the blip before does not count against it.
    linksB.delete('peer-A')
    env.advance(AGENT_LIMITS.liveMs - 1000)
    expect(await hostB.electionView()).toMatchObject({ active: false, winner: 'peer-A' })
    linksB.add('peer-A')
    await hostA.stop()
    await syncTech()
    expect(await hostB.electionView()).toMatchObject({ active: true, winner: 'peer-B' })
  })

  it("without links only the own claim is live: another device's old claim does not hold the slot", async () => {
    const { hostB, env, devB } = await twoDevices()
    const alone = new AgentsHost(devB, env, 'peer-B', { timers: false })
    await alone.start()
    expect(await alone.electionView()).toMatchObject({ active: true, winner: 'peer-B' })
    expect(hostB.peerId).toBe('peer-B')
  })

  it('an idle running agent host writes no tech-space change (10 virtual minutes)', async () => {
    const { account, env } = await agentAccount()
    const host = new AgentsHost(account, env, 'peer-A', { liveDevices: () => new Set(['peer-B']) })
    cleanup.push(() => host.stop())
    await host.start()
    await host.scheduler.idle()
    const before = (await account.tech.replica.allChanges()).length
    for (let s = 0; s < 600; s++) {
      env.advance(1000)
      await host.tick()
      await host.scheduler.idle()
      // A macrotask turn: signing a change is async crypto, which microtasks alone never let finish.
      await new Promise((r) => setImmediate(r))
    }
    await account.tech.settled()
    expect((await account.tech.replica.allChanges()).length).toBe(before)
    expect(await host.electionView()).toMatchObject({ active: true, winner: 'peer-A' })
  })
})
