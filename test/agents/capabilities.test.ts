import { afterEach, describe, expect, it } from 'vitest'
import { AgentsHost } from '../../node/agents/host.ts'
import type { JsonObject } from '../../sync/crdt/ops.ts'
import { eventsModule } from '../../sync/modules/events/module.ts'
import type { DeliveredEvent } from '../../sync/modules/events/envelope.ts'
import { agentAccount } from './helpers.ts'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c()
})

describe('the capability API in the trigger’s own space', () => {
  it('query and modify records, send a chat message marked with the agent group, publish on the event bus', async () => {
    const { account, env, space, chatId, anchor } = await agentAccount()
    const host = new AgentsHost(account, env, 'peer-A', { timers: false })
    cleanup.push(() => host.stop())
    await host.start()
    const seen: DeliveredEvent[] = []
    const sub = account.services.of(eventsModule).subscribe({ spaceIds: [space.spaceId], types: ['agent.'] }, (e) => void seen.push(e))
    cleanup.push(async () => sub.close())
    const res = await host.run({
      spaceId: space.spaceId,
      args: { anchor, chatId },
      source: `async function main(a, svc) {
      await svc.modify({ objectId: a.anchor, dataset: 'notes', records: [{ id: 'n1', upsert: true, ops: [{ type: '$set', path: '', value: { text: 'noted' } }] }] })
      const q = await svc.query({ objectId: a.anchor, dataset: 'notes', filter: { id: 'n1' } })
      const sent = await svc.chatSend({ text: 'hello from the agent', done: false })
      const pub = await svc.publish({ type: 'agent.progress', target: 'run-1', data: { step: 1 } })
      return { text: q.records[0].text, sent: typeof sent.messageId, delivered: pub.delivered }
    }`,
    })
    expect(res).toMatchObject({ status: 'ok', value: { text: 'noted', sent: 'string', delivered: 1 } })
    const msgs = (await space.datasetDocs(chatId, 'chat_messages')) as JsonObject[]
    expect(msgs).toHaveLength(1)
    expect(msgs[0]).toMatchObject({ text: 'hello from the agent', agent: { name: 'svc-agent', done: false }, creator: account.accountId })
    expect(seen.map((e) => [e.type, e.scope, e.spaceId, e.target, e.data])).toEqual([['agent.progress', 'space', space.spaceId, 'run-1', { step: 1 }]])
  })

  it('a run without a space gets no capability, and a model call without a provider fails the run', async () => {
    const { account, env, space } = await agentAccount()
    const host = new AgentsHost(account, env, 'peer-A', { timers: false })
    cleanup.push(() => host.stop())
    await host.start()
    const bare = await host.run({ source: 'function main(a, svc) { return Object.keys(svc) }' })
    expect(bare.value).toEqual([])
    const noModel = await host.run({ spaceId: space.spaceId, source: 'async function main(a, svc) { return await svc.model({ messages: [{ role: "user", content: "hi" }] }) }' })
    expect(noModel).toMatchObject({ status: 'failed', error: 'CapabilityError: no model provider is configured' })
  })
})
