/**
 * Issue 20, end to end: two real daemons of one account (the second restored from the
 * mnemonic), mDNS off, meeting over loopback by address. A floating chat-watch runs on exactly
 * one device (the election winner) and answers through a local fake model server; when that
 * daemon stops, the other device takes the election over and answers instead.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnSvc } from '../server/process.ts'
import { fakeModel } from '../agents/fake-model.ts'
import { addPeer, connected, S, type Account } from './accounts.ts'
import { ok, stopDaemon, until, type Daemon } from './daemons.ts'

interface AgentDaemon extends Daemon {
  control: string
}

const daemons: AgentDaemon[] = []
const closers: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const d of daemons) await stopDaemon(d)
  for (const c of closers) await c()
})

async function startAgentDaemon(name: string, modelUrl: string): Promise<AgentDaemon> {
  const dir = mkdtempSync(join(tmpdir(), `svc-agents-${name}-`))
  const s = spawnSvc(['serve', '--port', '0', '--data', dir, '--no-mdns', '--agents-port', '0', '--model-url', modelUrl, '--model', 'fake-1'], {
    env: { SVC_NO_MDNS: '1', SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0' },
  })
  const control = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = /agent control API on (http:\/\/\S+)/.exec(s.stderr())
      if (m && s.stdout().includes('\n')) resolve(m[1])
    }
    s.proc.stderr.on('data', check)
    s.proc.stdout.on('data', check)
    void s.exited.then((code) => reject(new Error(`svc serve exited ${code}: ${s.stderr()}`)))
    setTimeout(() => reject(new Error(`svc serve did not start: ${s.stderr()}`)), 90_000).unref()
  })
  const d: AgentDaemon = { dir, url: s.stdout().split('\n')[0], proc: s.proc, exited: s.exited, stderr: s.stderr, control }
  daemons.push(d)
  return d
}

const control = async (d: AgentDaemon, path: string) => (await fetch(`${d.control}${path}`)).json()

async function answersTo(d: Daemon, spaceId: string, chatId: string, msgId: string): Promise<any[]> {
  const r = await ok(d, 'POST', `${S(spaceId)}/query`, { objectId: chatId, dataset: 'chat_messages', filter: { replyToMessageId: msgId }, limit: 100 })
  return r.records.filter((m: any) => m.agent?.name === 'svc-agent')
}

describe('agents on two devices of one account', () => {
  it('a floating chat-watch answers on exactly one device and moves when that device stops', async () => {
    const model = await fakeModel((q) => `answer to ${q}`)
    closers.push(model.close)
    const d1 = await startAgentDaemon('one', model.url)
    const { mnemonic } = await ok(d1, 'POST', '/v1/auth', {})
    const space = await ok(d1, 'POST', '/v1/spaces', { name: 'Team' })
    const chat = (await ok(d1, 'POST', '/v1/catalog/general-chat/setup', { spaceId: space.id })).bundles.find((b: any) => b.id === 'system:general-chat/v1').bundle.rootId
    const d2 = await startAgentDaemon('two', model.url)
    await ok(d2, 'POST', '/v1/auth', { mnemonic })
    const a1 = { name: 'one', d: d1 } as unknown as Account
    const a2 = { name: 'two', d: d2 } as unknown as Account
    await addPeer(a1, a2)
    await addPeer(a2, a1)
    await until('the devices connect', async () => (await connected(a1, a2)) && (await connected(a2, a1)), 90_000, 300)

    // Both see the same winner: the first device (it claimed first); the other stands by.
    const views = await until(
      'both devices agree on the winner',
      async () => {
        const v = await Promise.all([control(d1, '/election'), control(d2, '/election')])
        return v[0].winner && v[0].winner === v[1].winner ? v : false
      },
      90_000,
      300,
    )
    expect(views.filter((v: any) => v.active)).toHaveLength(1)
    expect(views[0].active).toBe(true)

    // The second device holds the space and the reserved record, enabled (a model is configured).
    await until(
      'the second device holds the chat-watch record',
      async () => {
        const anchor = await ok(d2, 'POST', `${S(space.id)}/bundles/${encodeURIComponent('system:agents/v1')}/children`, { seed: 'triggers' })
        const r = await ok(d2, 'POST', `${S(space.id)}/query`, { objectId: anchor.objectId, dataset: 'agent_triggers', filter: { id: 'chat-watch' }, limit: 1 })
        return r.records[0]?.enabled === true
      },
      90_000,
      300,
    )

    const q1 = (await ok(d1, 'POST', `${S(space.id)}/objects/${encodeURIComponent(chat)}/chat/messages`, { text: 'first question' })).recordIds[0]
    await until('an answer to the first question', async () => (await answersTo(d1, space.id, chat, q1)).length > 0, 90_000, 300)
    // Exactly one device answered: wait until both hold the same messages, then count.
    await until('the answer reaches the second device', async () => (await answersTo(d2, space.id, chat, q1)).length > 0, 90_000, 300)
    await new Promise((r) => setTimeout(r, 3000))
    expect(await answersTo(d1, space.id, chat, q1)).toHaveLength(1)
    expect(await answersTo(d2, space.id, chat, q1)).toHaveLength(1)
    expect((await control(d1, '/triggers')).triggers.map((t: any) => t.id)).toContain('chat-watch')
    expect((await control(d2, '/triggers')).triggers.map((t: any) => t.id)).not.toContain('chat-watch')

    // The winner stops: the other device takes the election over and answers from then on.
    await stopDaemon(d1)
    await until('the second device becomes active', async () => (await control(d2, '/election')).active === true, 90_000, 500)
    await until('the second device adopts chat-watch', async () => (await control(d2, '/triggers')).triggers.some((t: any) => t.id === 'chat-watch'), 30_000, 300)
    const q2 = (await ok(d2, 'POST', `${S(space.id)}/objects/${encodeURIComponent(chat)}/chat/messages`, { text: 'second question' })).recordIds[0]
    const answers = await until(
      'an answer to the second question',
      async () => {
        const a = await answersTo(d2, space.id, chat, q2)
        return a.length > 0 ? a : false
      },
      90_000,
      300,
    )
    expect(answers[0].text).toBe('answer to second question')
  }, 400_000)
})
