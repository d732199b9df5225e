import { describe, expect, it } from 'vitest'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { pairSpaceId, startsObjectId } from '../../sync/space/one-to-one.ts'
import { identityDirectory } from '../../sync/space/directory.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { encodeAclRecord } from '../../sync/acl/records.ts'
import { signChange } from '../../sync/dag/change.ts'
import { identityOf, keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { LIMITS } from '../../sync/core/limits.ts'
import { toBase58 } from '../../sync/core/ids.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'
import { exchange } from '../one-to-one-helpers.ts'

async function account(n: number) {
  return AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto: await defaultCryptoProvider(), env: seededEnv(n), accountKey: keyFor(n) })
}

describe('A stranger offers a fake one-to-one space id', () => {
  it('only the pair space of (offering account, us) is opened; any other id opens nothing and writes no row', async () => {
    const victim = await account(1)
    const stranger = idFor(9)
    const friend = idFor(2)
    const before = victim.openSpaces().length
    const fakes = [
      toBase58(new Uint8Array(32).fill(7)), // a made-up id
      pairSpaceId(stranger, friend), // the stranger's pair with someone else
      pairSpaceId(friend, victim.accountId), // our pair with a friend, offered by the stranger
      victim.tech.spaceId, // our own tech space
      pairSpaceId(stranger, victim.accountId).slice(0, -1) + 'x', // close to the real one
    ]
    for (const id of fakes) expect(await victim.oneToOne.offered(id, stranger)).toBe(false)
    // A malformed offering identity is no account at all.
    expect(await victim.oneToOne.offered(pairSpaceId(stranger, victim.accountId), 'not-an-identity')).toBe(false)
    expect(victim.openSpaces().length).toBe(before)
    expect(await victim.listSpaces('all')).toEqual([])
    // The genuine pair: pending, never active by itself.
    expect(await victim.oneToOne.offered(pairSpaceId(stranger, victim.accountId), stranger)).toBe(true)
    expect((await victim.listSpaces('all')).map((s) => [s.id, s.status])).toEqual([[pairSpaceId(stranger, victim.accountId), 'one_to_one_pending']])
  })
})

describe('Accounts minted for free each offer their pair space', () => {
  it(`at most LIMITS.maxPendingOneToOne (${LIMITS.maxPendingOneToOne}) pending rows come from offers`, async () => {
    const victim = await account(1)
    let accepted = 0
    for (let i = 0; i < LIMITS.maxPendingOneToOne + 8; i++) {
      const minted = identityOf(keyPairFromSeed(new Uint8Array(32).fill(0).map((_, j) => (j < 4 ? (i >> (8 * j)) & 0xff : 200))).publicKey)
      if (await victim.oneToOne.offered(pairSpaceId(minted, victim.accountId), minted)) accepted++
    }
    expect(accepted).toBe(LIMITS.maxPendingOneToOne)
    expect((await victim.listSpaces('one_to_one_pending')).length).toBe(LIMITS.maxPendingOneToOne)
    // The user can still start one themselves.
    expect((await victim.oneToOne.initiate(idFor(77))).status).toBe('active')
  }, 60_000)
})

describe("A member's profile record names someone else", () => {
  it("a replayed copy of another member's sealed profile, and a member's own record, leave the other's name alone", async () => {
    const alice = await account(1)
    const mallory = keyFor(3)
    const malloryId = identityOf(mallory.publicKey)
    const s = (await alice.createSpace({ name: 'team' })).id
    const space = alice.space(s)
    await space.replica.addMember(malloryId, 'writer')
    await alice.setProfile({ name: 'Alice' })
    const aliceRecord = space.replica.acl.current().profiles().get(alice.accountId)!
    expect(aliceRecord).toBeDefined()

    // Mallory's replica of the space, and her forged record: Alice's sealed profile as her own.
    const m = await SpaceReplica.open(await deps(3), s, mallory)
    await pushAll(space.replica, m)
    const head = m.acl.citation()
    const prevIds = 'head' in head ? [head.head] : head.merge
    const lamport = Math.max(...prevIds.map((h) => m.acl.entries.get(h)!.lamport)) + 1
    const forged = await signChange(await defaultCryptoProvider(), mallory, {
      spaceId: s,
      treeId: s,
      prevIds,
      aclHeadId: '',
      seq: 100,
      lamport,
      timestamp: Date.now(),
      readKeyId: '',
      payload: encodeAclRecord({ type: 'profile', sealed: aliceRecord.sealed, keyId: aliceRecord.keyId }),
    })
    await space.replica.ingest([{ id: forged.id, raw: forged.raw }])
    await space.settled()
    let dir = await identityDirectory(alice)
    expect(dir.get(malloryId)?.name).toBe('')
    expect(dir.get(alice.accountId)?.name).toBe('Alice')

    // Mallory's own profile names Mallory only.
    await pushAll(space.replica, m)
    await m.setProfile({ name: 'Alice (really)' })
    await pushAll(m, space.replica)
    await space.settled()
    dir = await identityDirectory(alice)
    expect(dir.get(malloryId)?.name).toBe('Alice (really)')
    expect(dir.get(alice.accountId)?.name).toBe('Alice')
  })
})

describe('A writer deletes a derived object (the one-to-one starts object, a space index)', () => {
  it('the crafted delete is dropped on every replica: starting and un-declining keep working, the space keeps its index', async () => {
    const a = await account(1)
    const b = await account(2)
    const info = await a.oneToOne.initiate(b.accountId)
    await exchange(a, b, info.id)
    const starts = startsObjectId(info.id)
    const bs = b.held(info.id)!
    // The engine refuses it; a hostile peer signs it at the replica level anyway.
    await bs.replica.write(starts, [{ op: 'deleteObject' }])
    await bs.replica.write(bs.spaceIndexObjectId, [{ op: 'deleteObject' }])
    await exchange(a, b, info.id)
    for (const x of [a, b]) {
      expect(x.held(info.id)!.replica.treeMeta(starts)?.deleted).toBeUndefined()
      expect(x.held(info.id)!.replica.treeMeta(x.held(info.id)!.spaceIndexObjectId)?.deleted).toBeUndefined()
    }
    expect(await a.held(info.id)!.replica.stateDigest()).toBe(await bs.replica.stateDigest())
    await b.oneToOne.decline(info.id)
    expect((await a.oneToOne.initiate(b.accountId)).status).toBe('active')
    await exchange(a, b, info.id)
    expect((await b.info(info.id)).status).toBe('one_to_one_pending')
  })
})
