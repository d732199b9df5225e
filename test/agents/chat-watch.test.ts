import { afterEach, describe, expect, it } from 'vitest'
import { AgentsHost, NO_MODEL_STATUS } from '../../node/agents/host.ts'
import { CHANGE_DERIVED_ID, type JsonObject } from '../../sync/crdt/ops.ts'
import { readTrigger } from '../../sync/modules/agents/store.ts'
import { instant } from '../../sync/space/rows.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import { addTrigger, agentAccount } from './helpers.ts'
import { fakeModel } from './fake-model.ts'

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c()
})

async function send(space: SpaceEngine, chatId: string, text: string, at: number) {
  const res = await space.write(chatId, [
    { op: 'set', ds: 'chat_messages', id: CHANGE_DERIVED_ID, path: '', value: { creator: space.replica.me, createdAt: instant(at), modifiedAt: instant(at), text } },
  ])
  return res.recordIds[0]
}

describe('internal:chat-watch', () => {
  it('without a model the reserved record is written disabled with a clear lastStatus, and nothing answers', async () => {
    const { account, env, space } = await agentAccount()
    const host = new AgentsHost(account, env, 'peer-A', { timers: false })
    cleanup.push(() => host.stop())
    await host.start()
    await host.tick()
    expect((await readTrigger(space, 'chat-watch')).value).toMatchObject({ kind: 'event', program: 'internal:chat-watch', owner: '', enabled: false, lastStatus: NO_MODEL_STATUS })
  })

  it('with a model it answers a message in the chat, marked with the agent group, and never answers itself', async () => {
    const model = await fakeModel()
    cleanup.push(model.close)
    const { account, env, space, chatId } = await agentAccount()
    const host = new AgentsHost(account, env, 'peer-A', { timers: false, model: { url: model.url, model: 'fake-1', usdPerMTok: 2 } })
    cleanup.push(() => host.stop())
    await host.start()
    await host.tick()
    const rec = (await readTrigger(space, 'chat-watch')).value!
    expect(rec).toMatchObject({ enabled: true, owner: '' })
    env.advance(1000)
    const q = await send(space, chatId, 'what is 2+2?', env.now())
    await host.scheduler.idle()
    const docs = (await space.datasetDocs(chatId, 'chat_messages')) as JsonObject[]
    const answers = docs.filter((d) => (d.agent as JsonObject | undefined)?.name === 'svc-agent')
    expect(answers).toHaveLength(1)
    expect(answers[0]).toMatchObject({ text: 'echo: what is 2+2?', replyToMessageId: q, agent: { name: 'svc-agent', done: true } })
    expect(model.requests).toHaveLength(1)
    expect(model.requests[0].model).toBe('fake-1')
    const after = (await readTrigger(space, 'chat-watch')).value!
    expect(after).toMatchObject({ lastStatus: 'ok', runCount: 1, lastCostUsd: (15 * 2) / 1e6 })
    // Still floating: the reserved record follows the election.
    expect(after.owner).toBe('')
  })

  it('a device restarting alone does not answer what arrived while it was down', async () => {
    const model = await fakeModel()
    cleanup.push(model.close)
    const { account, env, space, chatId } = await agentAccount()
    const opts = { timers: false, model: { url: model.url, model: 'fake-1' } } as const
    const host = new AgentsHost(account, env, 'peer-A', opts)
    await host.start()
    await host.tick()
    env.advance(1000)
    await send(space, chatId, 'answered', env.now())
    await host.scheduler.idle()
    await host.stop()
    env.advance(1000)
    await send(space, chatId, 'while down', env.now())
    env.advance(60_000)
    const again = new AgentsHost(account, env, 'peer-A', opts)
    cleanup.push(() => again.stop())
    await again.start()
    await again.tick()
    await again.scheduler.idle()
    expect(model.requests).toHaveLength(1)
  })

  it('maxCostPerRun stops model calls inside a run', async () => {
    const model = await fakeModel()
    cleanup.push(model.close)
    const { account, env, space } = await agentAccount()
    const host = new AgentsHost(account, env, 'peer-A', { timers: false, model: { url: model.url, model: 'fake-1', usdPerMTok: 1_000_000 } })
    cleanup.push(() => host.stop())
    await host.start()
    const res = await host.run({
      spaceId: space.spaceId,
      source: `async function main(a, svc) {
      const first = await svc.model({ messages: [{ role: 'user', content: 'one' }] })
      try { await svc.model({ messages: [{ role: 'user', content: 'two' }] }); return 'spent twice' } catch (e) { return first.text + ' / ' + e.message }
    }`,
    })
    await addTrigger(space, 'unused', { kind: 'cron', spec: { every_s: 3600 }, program: 'agent:noop@v1' })
    expect(res.status).toBe('ok')
    // No per-run cap given to /run: both calls are allowed; a capped trigger refuses the second.
    expect(res.value).toBe('spent twice')
    const capped = await host.runner.run({
      space,
      source: `async function main(a, svc) {
      await svc.model({ messages: [{ role: 'user', content: 'one' }] })
      try { await svc.model({ messages: [{ role: 'user', content: 'two' }] }); return 'spent twice' } catch (e) { return e.message }
    }`,
      args: {},
      limits: { maxCostPerRun: 1 },
      runId: 'r',
    })
    expect(capped.value).toMatch(/maxCostPerRun/)
    expect(capped.costUsd).toBe(15)
  })
})
