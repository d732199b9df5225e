import { afterEach, describe, expect, it } from 'vitest'
import { AgentsHost } from '../../node/agents/host.ts'
import { sinkLogger } from '../../sync/core/log.ts'
import { sourceHash } from '../../node/agents/runner.ts'
import type { JsonObject } from '../../sync/crdt/ops.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { PROGRAMS_DS, RUNS_DS } from '../../sync/modules/agents/record.ts'
import { anchorIdOf, readTrigger, writeTrigger } from '../../sync/modules/agents/store.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'
import { addProgram, addTrigger, agentAccount } from '../agents/helpers.ts'

/**
 * Issue 33, item B: a trigger runs only code its owner wrote or pinned by content hash, never
 * code resolved by a name another member can claim. A registry version `<name>@v<N>` is the
 * first write of that id (merge pins), so a member who writes `report@v1` before the owner
 * decides what the owner's trigger would run, with the owner's keys.
 */

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c()
})

const MEMBER_SOURCE = 'async function main(a, svc) { await svc.chatSend({ text: "pwned by the member" }); return "member code ran" }'
const OWNER_SOURCE = 'async function main(a, svc) { await svc.chatSend({ text: "the owner’s report" }); return "owner code ran" }'

async function ownerAndMember() {
  const a = await agentAccount()
  const warnings: Array<{ message: string; details?: Record<string, unknown> }> = []
  const log = sinkLogger('agents', ({ level: _level, scope: _scope, msg, ...details }) => warnings.push({ message: msg, details }), 'warn')
  const host = new AgentsHost(a.account, a.env, 'peer-A', { timers: false, log })
  cleanup.push(() => host.stop())
  await host.start()
  await a.space.replica.addMember(idFor(2), 'writer')
  const member = await SpaceEngine.open(await deps(2), a.space.spaceId, keyFor(2), { modules: DEFAULT_MODULES })
  await pushAll(a.space.replica, member.replica)
  await member.settled()
  return { ...a, host, member, warnings }
}

async function texts(space: SpaceEngine, chatId: string) {
  return (await space.datasetDocs(chatId, 'chat_messages')).map((d) => (d as JsonObject).text)
}

async function fireOnce(host: AgentsHost, space: SpaceEngine, id: string, fields: JsonObject) {
  await addTrigger(space, id, { kind: 'once', spec: { at: 1 }, owner: 'peer-A', ...fields })
  await host.tick()
  await host.scheduler.idle()
  return (await readTrigger(space, id)).value!
}

describe('a member claims the name of a program the owner’s trigger runs', () => {
  it('the member’s registry version never runs under the owner’s trigger; the trigger says why; the owner’s own write is refused visibly', async () => {
    const { host, space, member, chatId, warnings } = await ownerAndMember()
    await addProgram(member, 'report@v1', MEMBER_SOURCE)
    await pushAll(member.replica, space.replica)
    await space.settled()
    // The owner writing the same version afterwards loses to the member's record: the write
    // answers with the refusal, never a silent success.
    const write = await space.modify({
      objectId: anchorIdOf(space.spaceId),
      dataset: PROGRAMS_DS,
      records: [{ id: 'report@v1', upsert: true, ops: [{ type: '$set', path: '', value: { name: 'report', version: 1, source: OWNER_SOURCE } }] }],
    })
    expect(write.rejections?.map((r) => r.code)).toEqual(['merge.refused'])

    const trigger = await fireOnce(host, space, 'daily-report', { program: 'report@v1' })
    expect(await texts(space, chatId)).not.toContain('pwned by the member')
    expect(trigger.lastStatus).toBe('untrusted_program')
    const runs = await space.replica.listRecords(anchorIdOf(space.spaceId), RUNS_DS)
    expect(runs.map((r) => (r.value as JsonObject).error)).toEqual([expect.stringMatching(/^untrusted_program: program report@v1 was created by another account/)])
    expect(warnings).toEqual([expect.objectContaining({ message: expect.stringMatching(/not run/), details: expect.objectContaining({ program: 'report@v1' }) })])
  })

  it('POST /run of the member’s version does not run it either', async () => {
    const { host, space, member, chatId } = await ownerAndMember()
    await addProgram(member, 'report@v1', MEMBER_SOURCE)
    await pushAll(member.replica, space.replica)
    await space.settled()
    const res = await host.run({ program: 'report@v1', spaceId: space.spaceId })
    expect(res).toMatchObject({ status: 'failed', error: expect.stringMatching(/^untrusted_program/) })
    expect(await texts(space, chatId)).not.toContain('pwned by the member')
    // Pinned by the caller, exactly that source runs; a pin of another source runs nothing.
    expect(await host.run({ program: 'report@v1', spaceId: space.spaceId, programHash: sourceHash(OWNER_SOURCE) })).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^untrusted_program/),
    })
    expect(await host.run({ program: 'report@v1', spaceId: space.spaceId, programHash: sourceHash(MEMBER_SOURCE).toUpperCase() })).toMatchObject({
      status: 'ok',
      value: 'member code ran',
    })
  })

  it('a trigger that pins the source by programHash runs exactly that source, whoever wrote the record', async () => {
    const { host, space, member, chatId } = await ownerAndMember()
    await addProgram(member, 'report@v1', MEMBER_SOURCE)
    await pushAll(member.replica, space.replica)
    await space.settled()
    const pinned = await fireOnce(host, space, 'vetted', { program: 'report@v1', programHash: sourceHash(MEMBER_SOURCE) })
    expect(pinned.lastStatus).toBe('ok')
    expect(await texts(space, chatId)).toContain('pwned by the member')

    const wrongPin = await fireOnce(host, space, 'pinned-elsewhere', { program: 'report@v1', programHash: sourceHash(OWNER_SOURCE) })
    expect(wrongPin.lastStatus).toBe('untrusted_program')
  })

  it('the owner’s own version runs; a pin that no longer matches stops it', async () => {
    const { host, space, chatId } = await ownerAndMember()
    await addProgram(space, 'report@v1', OWNER_SOURCE)
    const own = await fireOnce(host, space, 'own', { program: 'report@v1' })
    expect(own.lastStatus).toBe('ok')
    expect(await texts(space, chatId)).toContain('the owner’s report')
    await writeTrigger(space, 'own', { programHash: 'ab'.repeat(32), enabled: true }, ['lastRunAt'])
    await host.tick()
    await host.scheduler.idle()
    expect((await readTrigger(space, 'own')).value!.lastStatus).toBe('untrusted_program')
  })
})
