import { describe, expect, it } from 'vitest'
import { REPLICA_LIMITS } from '../../sync/core/limits.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { seal } from '../../sync/crypto/box.ts'
import { derivedRoot, signChange } from '../../sync/dag/change.ts'
import { derivedObjectId, SpaceReplica } from '../../sync/replica/space-replica.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'

const rootOf = (spaceId: string, seed: string) => derivedRoot(spaceId, encodeCanonical({ kind: 'object', seed }))
const set = (value: number) => [{ op: 'set' as const, ds: 'd', id: 'r', path: 'v', value }]

describe('a stranger writes permanent junk into any space: derived roots are unsigned and accepted with any seed', () => {
  it('4,000 derived roots with seeds nobody expects do not materialize, are not offered to peers, and are bounded in memory', async () => {
    const owner = await SpaceReplica.create(await deps(1), keyFor(1))
    await owner.createObject()
    const trees = owner.treeIds()
    const digest = await owner.stateDigest()
    const held = (await owner.allChanges()).length
    const junk = Array.from({ length: 4000 }, (_, i) => rootOf(owner.spaceId, `junk-${i}`))
    const rep = await owner.ingest(
      junk.map((c) => ({ id: c.id, raw: c.raw })),
      { origin: 'mallory' },
    )
    expect(rep.accepted).toEqual([])
    expect(owner.treeIds()).toEqual(trees)
    expect(await owner.stateDigest()).toBe(digest)
    expect((await owner.allChanges()).length).toBe(held)
    const m = owner.memory()
    expect(m.heldDerivedBytes).toBeLessThanOrEqual(REPLICA_LIMITS.maxDerivedCandidateBytes)
    expect(m.heldDerivedRoots).toBeLessThan(4000)
  })

  it('a change by a member who may not write does not vouch for a derived root', async () => {
    const { crypto, env } = await deps(2)
    const owner = await SpaceReplica.create(await deps(2), keyFor(1))
    await owner.addMember(idFor(3), 'reader')
    const reader = await SpaceReplica.open(await deps(3), owner.spaceId, keyFor(3))
    await pushAll(owner, reader)
    const root = rootOf(owner.spaceId, 'reader-junk')
    const aclHeadId = (owner.acl.citation() as { head: string }).head
    const readKeyId = owner.acl.current().readKeyId!
    const c = await signChange(crypto, keyFor(3), {
      spaceId: owner.spaceId,
      treeId: root.id,
      prevIds: [root.id],
      aclHeadId,
      seq: 1,
      lamport: 1,
      timestamp: env.now(),
      readKeyId,
      payload: seal(env, reader.keyring.get(readKeyId)!, encodeCanonical({ ops: set(1) }), undefined, crypto.aead),
    })
    const rep = await owner.ingest(
      [
        { id: root.id, raw: root.raw },
        { id: c.id, raw: c.raw },
      ],
      { origin: 'reader' },
    )
    expect(rep.accepted).toEqual([])
    expect(owner.treeMeta(root.id)).toBeUndefined()
  })

  it('a derived object reaches a member whose code does not expect it once a writer builds on it, in any arrival order', async () => {
    const owner = await SpaceReplica.create(await deps(4), keyFor(1))
    await owner.addMember(idFor(2), 'writer')
    const obj = await owner.createObject({ seed: 'bundle-child' })
    await owner.write(obj, set(1))
    const all = await owner.allChanges()
    for (const order of [all, [...all].reverse()]) {
      const member = await SpaceReplica.open(await deps(5), owner.spaceId, keyFor(2))
      // ACL first (head sync sends it first); the object's changes in the given order, one per ingest.
      await member.ingest(
        all.filter((c) => c.treeId === owner.spaceId),
        { origin: 'owner' },
      )
      for (const c of order.filter((c) => c.treeId !== owner.spaceId)) await member.ingest([c], { origin: 'owner' })
      expect(member.treeIds()).toEqual([obj])
      expect((await member.getRecord(obj, 'd', 'r'))?.value).toEqual({ v: 1 })
      expect(await member.stateDigest()).toBe(await owner.stateDigest())
    }
  })

  it("devices of one account converge on a derived object nobody wrote to, since each one's code expects its seed", async () => {
    const a = await SpaceReplica.create(await deps(6), keyFor(1), { seed: 'tech' })
    const b = await SpaceReplica.create(await deps(7), keyFor(1), { seed: 'tech' })
    const oa = await a.createObject({ seed: 'profile' })
    // b has not created it yet but expects it: the bare root from a applies.
    expect(await b.expectDerived('profile')).toBe(oa)
    await pushAll(a, b)
    await pushAll(b, a)
    expect(b.treeIds()).toEqual([oa])
    expect(await b.stateDigest()).toBe(await a.stateDigest())
    // Held first, expected later: applies then.
    const c = await SpaceReplica.create(await deps(8), keyFor(1), { seed: 'tech' })
    await pushAll(a, c)
    await pushAll(c, a)
    expect(c.treeIds()).toEqual([])
    expect(await c.createObject({ seed: 'profile' })).toBe(derivedObjectId(c.spaceId, 'profile'))
    expect(c.treeIds()).toEqual([oa])
    expect(await c.stateDigest()).toBe(await a.stateDigest())
  })
})
