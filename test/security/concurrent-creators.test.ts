import { beforeAll, describe, expect, it } from 'vitest'
import { ensureXxh3 } from '../../sync/crypto/hash.ts'
import type { Json, Op } from '../../sync/crdt/ops.ts'
import { decodeChange } from '../../sync/dag/change.ts'
import { agentsModule } from '../../sync/modules/agents/module.ts'
import { PROGRAMS_DS, TRIGGERS_DS } from '../../sync/modules/agents/record.ts'
import { chatModule } from '../../sync/modules/chat/module.ts'
import { SpaceReplica, type ReplicaDeps } from '../../sync/replica/space-replica.ts'
import { ModuleSet } from '../../sync/space/module.ts'
import { spacePolicy } from '../../sync/space/schema.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'

/*
 * Issue 33, item 2: under a creator rule (`creatorOnly`: agent programs, triggers and runs),
 * two accounts that write the same record id concurrently must end with the same record on
 * every peer, whichever change a peer sees first. Before the fix, a replica that held the
 * higher-stamped create refused the lower one as "stamped before the create", and the other
 * replica did the opposite: each kept its own writer's program, and the digests differed.
 */

const ALICE = 1,
  BOB = 2
const policy = new ModuleSet([chatModule, agentsModule]).policy(spacePolicy)
const ruledDeps = async (seed: number): Promise<ReplicaDeps> => ({ ...(await deps(seed)), policy })

beforeAll(async () => ensureXxh3())

async function setup() {
  const alice = await SpaceReplica.create(await ruledDeps(1), keyFor(ALICE))
  const tree = await alice.createObject()
  await alice.addMember(idFor(BOB), 'writer')
  const bob = await SpaceReplica.open(await ruledDeps(2), alice.spaceId, keyFor(BOB))
  await pushAll(alice, bob)
  return { alice, bob, tree }
}

const program = (by: string, source: string): Json => ({ id: 'report@v1', name: 'report', version: 1, source, by })
const setRecord = (ds: string, id: string, value: Json): Op => ({ op: 'set', ds, id, path: '', value })

describe('Two accounts create the same creator-ruled record concurrently', () => {
  it('every replica keeps the lower-stamped create and refuses the other, in any arrival order', async () => {
    const { alice, bob, tree } = await setup()
    // Concurrent: neither has seen the other's write.
    const a = await alice.write(tree, [setRecord(PROGRAMS_DS, 'report@v1', program('alice', 'export default () => "alice"'))])
    const b = await bob.write(tree, [setRecord(PROGRAMS_DS, 'report@v1', program('bob', 'export default () => "bob"'))])
    expect(a.rejections ?? []).toEqual([])
    expect(b.rejections ?? []).toEqual([])
    // A third replica (another device of Alice's) sees Bob's change first, then Alice's.
    const carol = await SpaceReplica.open(await ruledDeps(3), alice.spaceId, keyFor(ALICE))
    await pushAll(bob, carol)
    await pushAll(alice, carol)
    await pushAll(alice, bob)
    await pushAll(bob, alice)
    const values = await Promise.all([alice, bob, carol].map(async (r) => (await r.getRecord(tree, PROGRAMS_DS, 'report@v1'))?.value))
    expect(values[1]).toEqual(values[0])
    expect(values[2]).toEqual(values[0])
    const digest = await alice.stateDigest()
    expect(await bob.stateDigest()).toBe(digest)
    expect(await carol.stateDigest()).toBe(digest)
    // The winner is the lower stamp (the one total order every peer agrees on).
    const rec = await alice.getRecord(tree, PROGRAMS_DS, 'report@v1')
    const stamp = async (r: SpaceReplica, id: string) => ({ l: decodeChange((await r.rawChanges(tree, [id]))[0].raw).lamport, c: id })
    const lower = [await stamp(alice, a.changeId), await stamp(bob, b.changeId)].sort((x, y) => x.l - y.l || (x.c < y.c ? -1 : 1))[0].c
    expect(rec?.created.c).toBe(lower)
    expect((rec?.value as { by: string }).by).toBe(lower === a.changeId ? 'alice' : 'bob')
  })

  it("the later edits of the losing writer are refused everywhere, the winner's apply everywhere", async () => {
    const { alice, bob, tree } = await setup()
    await alice.write(tree, [setRecord(TRIGGERS_DS, 't1', { id: 't1', enabled: true, program: 'a@v1' })])
    await bob.write(tree, [setRecord(TRIGGERS_DS, 't1', { id: 't1', enabled: true, program: 'b@v1' })])
    // Each writer edits its own view before hearing from the other.
    await alice.write(tree, [{ op: 'set', ds: TRIGGERS_DS, id: 't1', path: 'enabled', value: false }])
    await bob.write(tree, [{ op: 'set', ds: TRIGGERS_DS, id: 't1', path: 'args', value: { x: 1 } }])
    await pushAll(bob, alice)
    await pushAll(alice, bob)
    expect(await bob.stateDigest()).toBe(await alice.stateDigest())
    const rec = (await alice.getRecord(tree, TRIGGERS_DS, 't1'))!
    const winner = rec.created.a
    expect([idFor(ALICE), idFor(BOB)]).toContain(winner)
    const v = rec.value as Record<string, Json>
    if (winner === idFor(ALICE)) expect(v).toEqual({ id: 't1', enabled: false, program: 'a@v1' })
    else expect(v).toEqual({ id: 't1', enabled: true, program: 'b@v1', args: { x: 1 } })
  })
})
