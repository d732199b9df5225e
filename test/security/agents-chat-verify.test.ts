import { afterEach, describe, expect, it } from 'vitest'
import { AgentsHost } from '../../node/agents/host.ts'
import { CHANGE_DERIVED_ID, type JsonObject } from '../../sync/crdt/ops.ts'
import { chatModule } from '../../sync/modules/chat/module.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { anchorIdOf, createTrigger } from '../../sync/modules/agents/store.ts'
import { runQuery } from '../../sync/query/snapshot.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'
import { addTrigger, agentAccount } from '../agents/helpers.ts'

/**
 * Issue 33, item D: the `agent` group of a chat message is client-written (chat.md: a hint), so
 * a member could post `agent: {name: "svc-agent"}` and look like the agent. What clients read
 * now says whether it is vouched for: `agent.verified` is true only for a message sent with
 * the keys of the account that created the trigger its debugLink names.
 */

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c()
})

async function ownerAndMember() {
  const a = await agentAccount()
  const host = new AgentsHost(a.account, a.env, 'peer-A', { timers: false })
  cleanup.push(() => host.stop())
  await host.start()
  await a.space.replica.addMember(idFor(2), 'writer')
  const member = await SpaceEngine.open(await deps(2), a.space.spaceId, keyFor(2), { modules: DEFAULT_MODULES })
  await pushAll(a.space.replica, member.replica)
  await member.settled()
  return { ...a, host, member }
}

/** Messages as a client reads them: `POST {S}/query` on the chat's dataset. */
async function read(space: SpaceEngine, chatId: string): Promise<JsonObject[]> {
  return runQuery(await space.datasetSource(chatId, 'chat_messages'), { limit: 100 }).records as JsonObject[]
}
const byText = (msgs: JsonObject[], text: string) => msgs.find((m) => m.text === text)

describe('a member posts a message that looks like the agent’s', () => {
  it('the agent’s own message reads verified; a member’s look-alike reads unverified, even naming the agent’s trigger', async () => {
    const { host, space, member, chatId } = await ownerAndMember()
    await addTrigger(space, 'say', { kind: 'once', spec: { at: 1 }, program: 'agent:say@v1', args: { text: 'from the agent' }, owner: 'peer-A' })
    await host.tick()
    await host.scheduler.idle()
    await pushAll(space.replica, member.replica)
    await member.settled()
    const real = byText(await read(space, chatId), 'from the agent')!
    expect(real.agent).toMatchObject({ name: 'svc-agent', verified: true, debugLink: `svc://${space.spaceId}/${anchorIdOf(space.spaceId)}#say` })

    const chat = member.services.of(chatModule)
    await chat.send(chatId, { text: 'I am the agent, send me your keys', agent: { name: 'svc-agent', done: true } })
    await chat.send(chatId, { text: 'me too', agent: { name: 'svc-agent', done: true, debugLink: real.agent && (real.agent as JsonObject).debugLink } })
    await pushAll(member.replica, space.replica)
    await space.settled()
    const msgs = await read(space, chatId)
    expect(byText(msgs, 'I am the agent, send me your keys')!.agent).toMatchObject({ name: 'svc-agent', verified: false })
    expect(byText(msgs, 'me too')!.agent).toMatchObject({ verified: false })
    // The member's own replica judges alike (nothing of it is local to the owner).
    const theirs = await read(member, chatId)
    expect(byText(theirs, 'from the agent')!.agent).toMatchObject({ verified: true })
    expect(byText(theirs, 'me too')!.agent).toMatchObject({ verified: false })
  })

  it('a member who writes `verified: true` into the change itself (past the route’s checks) still reads unverified', async () => {
    const { space, member, chatId } = await ownerAndMember()
    const at = { $date: new Date(member.env.now()).toISOString() }
    await member.write(chatId, [
      {
        op: 'set',
        ds: 'chat_messages',
        id: CHANGE_DERIVED_ID,
        path: '',
        value: { creator: member.replica.me, createdAt: at, modifiedAt: at, text: 'forged', agent: { name: 'svc-agent', done: true, verified: true } },
      },
    ])
    await pushAll(member.replica, space.replica)
    await space.settled()
    expect(byText(await read(space, chatId), 'forged')!.agent).toMatchObject({ verified: false })
  })

  it('a member’s look-alike fires event triggers like any message (only the agent’s own messages are skipped)', async () => {
    const { host, space, member, chatId } = await ownerAndMember()
    await addTrigger(space, 'watch', { kind: 'event', spec: { dataset: 'chat_messages', objectId: chatId }, program: 'agent:noop@v1', owner: 'peer-A' })
    await host.tick()
    await member.services.of(chatModule).send(chatId, { text: 'hush, I am the agent', agent: { name: 'svc-agent', done: true } })
    await pushAll(member.replica, space.replica)
    await space.settled()
    await host.scheduler.idle()
    expect(host.scheduler.registry.get(`${space.spaceId}/watch`)!.def.runCount).toBe(1)
  })

  it('a message read before its trigger’s record arrived turns verified when the record lands', async () => {
    const { space, chatId } = await ownerAndMember()
    const link = `svc://${space.spaceId}/${anchorIdOf(space.spaceId)}#late`
    const at = { $date: new Date(space.env.now()).toISOString() }
    await space.write(chatId, [
      {
        op: 'set',
        ds: 'chat_messages',
        id: CHANGE_DERIVED_ID,
        path: '',
        value: { creator: space.replica.me, createdAt: at, modifiedAt: at, text: 'early', agent: { name: 'svc-agent', done: true, debugLink: link } },
      },
    ])
    expect(byText(await read(space, chatId), 'early')!.agent).toMatchObject({ verified: false })
    await createTrigger(space, 'late', { name: 'late', kind: 'cron', spec: { every_s: 3600 }, program: 'agent:noop@v1', args: {}, owner: 'nobody', enabled: false })
    for (let i = 0; i < 20 && (byText(await read(space, chatId), 'early')!.agent as JsonObject).verified !== true; i++) await new Promise((r) => setTimeout(r, 10))
    expect(byText(await read(space, chatId), 'early')!.agent).toMatchObject({ verified: true })
  })
})
