import { describe, expect, it } from 'vitest'
import { Keyring } from '../../sync/acl/keyring.ts'
import { decodeChange } from '../../sync/dag/change.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { modifyRecords } from '../../sync/space/modify.ts'
import { leaks, postRemovalKeys } from '../../sim/checks.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'

// Accounts: 1 owner, 2 admin, 4 a member adversary (writer), 5 a writer the owner removes.
const OWNER = 1,
  A = 2,
  X = 4,
  M = 5

/**
 * Seed 185 of `npm run sim -- --seeds 300 --peers 12 --adversaries 2`, reduced: the owner
 * removes M (its rotation wrapped to X, not yet known removed) while admin A concurrently
 * removes X. X writes under the owner's new key and pushes the write to M, which knows of
 * neither removal: it parks the write for the ACL record it cites, and applies it as void (no
 * key needed) once both removals arrive. M then holds ciphertext under a key made at its own
 * removal: the rules let it in, it cannot open it, and only the hostile author could send it.
 */
describe('A removed member holds what a hostile member relayed', () => {
  it('holds the void write but reaches no key for it, and the leak check names it only when no hostile peer holds it', async () => {
    const owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
    await owner.addMember(idFor(A), 'admin')
    await owner.addMember(idFor(X), 'writer')
    await owner.addMember(idFor(M), 'writer')
    const obj = await owner.createObject()
    await modifyRecords(owner, obj, 'd', [{ id: 'a', ops: [{ type: '$set', path: 'v', value: 1 }] }])
    const open = async (n: number) => {
      const r = await SpaceReplica.open(await deps(n), owner.spaceId, keyFor(n))
      expect((await pushAll(owner, r)).rejected).toEqual([])
      return r
    }
    const [admin, x, m] = [await open(A), await open(X), await open(M)]

    // Concurrently: the owner removes M (rotating to A and X), A removes X (rotating to the owner and M).
    const removeM = await owner.removeMember(idFor(M))
    const removeX = await admin.removeMember(idFor(X))
    // X learns of M's removal only, and writes under that removal's key.
    expect((await pushAll(owner, x)).rejected).toEqual([])
    const w = (await modifyRecords(x, obj, 'd', [{ id: 'b', ops: [{ type: '$set', path: 'v', value: 2 }] }])).changeId
    const raw = (await x.rawChanges(obj, [w]))[0].raw
    expect(decodeChange(raw).readKeyId).toBe(removeM)

    // M still takes X for a member: the write parks for the record it cites.
    const parked = await m.ingest([{ id: w, raw }], { origin: 'x0' })
    expect(parked.missing).toEqual([removeM])
    // A's records, then the removal notice's: the parked write wakes, void (X's removal is concurrent with the head it cites).
    expect((await pushAll(admin, m)).rejected).toEqual([])
    expect(m.acl.has(removeX)).toBe(true)
    const woke = await m.ingest(
      (await owner.allChanges()).filter((c) => c.id === removeM),
      { origin: 'p0' },
    )
    expect(woke.voided).toContain(w)
    expect(m.acl.current().canRead(idFor(M))).toBe(false)
    expect((await m.allChanges()).some((c) => c.id === w)).toBe(true)

    // Members hold both removals; the write is void there too.
    expect((await pushAll(admin, owner)).rejected).toEqual([])
    const full = owner.acl
    const keys = postRemovalKeys(full, idFor(M))
    expect(keys.has(removeM)).toBe(true)
    // M cannot open it: no key through the full ACL, nor through its own.
    expect(new Keyring(full, keyFor(M)).get(removeM)).toBeUndefined()
    expect(m.keyring.get(removeM)).toBeUndefined()

    // The hostile author holds it (it may send it anywhere): not a leak.
    const hostileHeld = new Set((await x.allChanges()).map((c) => c.id))
    expect(await leaks(m, keyFor(M), full, keys, undefined, hostileHeld)).toEqual([])
    // Held by no hostile peer, it could only have come from an honest one serving M: a leak.
    expect(await leaks(m, keyFor(M), full, keys)).toEqual([`holds change ${w} sealed under post-removal key`])
  })
})
