import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { assembleChange, signChange, type Change } from '../../sync/dag/change.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { seal } from '../../sync/crypto/box.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'
import type { KeyPair } from '../../sync/crypto/keys.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

interface CraftOptions {
  aclHeadId?: string
  prevIds?: string[]
  readKeyId?: string
  lamportFrom?: SpaceReplica
  timestamp?: number
  recordId?: string
  value?: unknown
}

/** Hand-builds a signed change as a (possibly malicious) client would, from a replica's view. */
async function craft(r: SpaceReplica, key: KeyPair, objectId: string, o: CraftOptions = {}): Promise<Change> {
  const readKeyId = o.readKeyId ?? r.acl.current().readKeyId!
  const prevIds = o.prevIds ?? r.heads(objectId)
  const idx = await (o.lamportFrom ?? r).treeIndex(objectId)
  const lamport = Math.max(...prevIds.map((p) => idx.get(p)!.lamport)) + 1
  const ops = [{ op: 'set', ds: 'd', id: o.recordId ?? 'x', path: 'v', value: o.value ?? 666 }]
  const payload = seal(seededEnv(9), r.keyring.get(readKeyId)!, encodeCanonical({ ops }))
  return signChange(await defaultCryptoProvider(), key, {
    spaceId: r.spaceId,
    treeId: objectId,
    prevIds,
    aclHeadId: o.aclHeadId ?? (r.acl.citation() as { head: string }).head,
    seq: 1,
    lamport,
    timestamp: o.timestamp ?? 2_000_000_000_000,
    readKeyId,
    payload,
  })
}

const items = (cs: Change[]) => cs.map((c) => ({ id: c.id, raw: c.raw }))

async function setup() {
  const owner = await SpaceReplica.create(await deps(1), keyFor(1))
  await owner.addMember(idFor(2), 'writer')
  await owner.addMember(idFor(3), 'reader')
  await owner.addMember(idFor(4), 'guest')
  const obj = await owner.createObject()
  await modifyRecords(owner, obj, 'd', [{ id: 'x', ops: [{ type: '$set', path: 'v', value: 1 }] }])
  const replicaOf = async (n: number) => {
    const r = await SpaceReplica.open(await deps(n), owner.spaceId, keyFor(n))
    expect((await pushAll(owner, r)).rejected).toEqual([])
    return r
  }
  return { owner, obj, replicaOf }
}

describe('ingest rejects and keeps going', () => {
  it('a tampered payload, a wrong id and a forged author, each typed, without stopping the batch', async () => {
    const { owner, obj, replicaOf } = await setup()
    const good = await craft(await replicaOf(2), keyFor(2), obj)
    // Tampered payload under the original signature: the bytes hash to a new id and the signature fails.
    const payload = good.payload.slice()
    payload[payload.length - 1] ^= 1
    const tampered = assembleChange({ ...good, payload }, good.signature)
    // Claims the owner wrote it, but member 2 signed it.
    const forged = assembleChange({ ...good, author: idFor(1) }, good.signature)
    const rep = await owner.ingest([
      { id: tampered.id, raw: tampered.raw },
      { id: good.id, raw: tampered.raw }, // bytes that do not hash to the id they travel under
      { id: forged.id, raw: forged.raw },
      { id: good.id, raw: good.raw },
    ])
    expect(rep.rejected).toEqual([
      { id: good.id, reason: 'bad_id' },
      { id: tampered.id, reason: 'bad_signature' },
      { id: forged.id, reason: 'bad_signature' },
    ])
    expect(rep.accepted).toEqual([good.id])
    expect((await owner.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 666 })
  })

  it('a validly signed payload that does not open under its read key', async () => {
    const { owner, obj, replicaOf } = await setup()
    const good = await craft(await replicaOf(2), keyFor(2), obj)
    const garbage = seal(seededEnv(5), new Uint8Array(32).fill(1), encodeCanonical({ ops: [] }))
    const signed = await signChange(await defaultCryptoProvider(), keyFor(2), { ...good, payload: garbage })
    expect((await owner.ingest(items([signed]))).rejected).toEqual([{ id: signed.id, reason: 'bad_payload' }])
  })

  it('malformed bytes are refused as malformed', async () => {
    const { owner } = await setup()
    const rep = await owner.ingest([
      { id: 'abc', raw: new Uint8Array([1, 2, 3]) },
      { id: 'x', raw: encodeCanonical(['a', 'b']) },
    ])
    expect(rep.rejected.map((r) => r.reason)).toEqual(['malformed', 'malformed'])
  })

  it('a write by a reader, by a guest and by a stranger', async () => {
    const { owner, obj, replicaOf } = await setup()
    const reader = await craft(await replicaOf(3), keyFor(3), obj)
    const guest = await craft(await replicaOf(4), keyFor(4), obj)
    const stranger = await craft(await replicaOf(2), keyFor(7), obj)
    const rep = await owner.ingest(items([reader, guest, stranger]))
    expect(rep.rejected).toEqual([
      { id: reader.id, reason: 'read_only' },
      { id: guest.id, reason: 'read_only' },
      { id: stranger.id, reason: 'not_member' },
    ])
    expect((await owner.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 1 })
  })

  it('a write by a removed member after removal', async () => {
    const { owner, obj, replicaOf } = await setup()
    const w = await replicaOf(2)
    const preRemovalHead = (owner.acl.citation() as { head: string }).head
    const oldKeyId = owner.acl.current().readKeyId!
    const oldHeads = owner.heads(obj)
    await owner.removeMember(idFor(2))
    await modifyRecords(owner, obj, 'd', [{ id: 'x', ops: [{ type: '$set', path: 'v', value: 2 }] }])
    // The removed member learns all it may: it cannot open the change written after removal.
    const seen = await pushAll(owner, w)
    expect(seen.rejected.map((r) => r.reason)).toEqual(['no_read_key'])
    await expect(modifyRecords(w, obj, 'd', [{ id: 'x', ops: [{ type: '$set', path: 'v', value: 3 }] }])).rejects.toMatchObject({ code: 'space.read_only' })
    // Citing the removal: not a member there.
    const citingRemoval = await craft(w, keyFor(2), obj, { readKeyId: oldKeyId })
    // Citing the old ACL head while building on the tree's post-removal heads: stale.
    const stale = await craft(w, keyFor(2), obj, { aclHeadId: preRemovalHead, readKeyId: oldKeyId, prevIds: owner.heads(obj), lamportFrom: owner })
    // Citing the old ACL head on old heads, stamped after the removal: kept in the DAG, voided.
    const backdated = await craft(w, keyFor(2), obj, { aclHeadId: preRemovalHead, readKeyId: oldKeyId, prevIds: oldHeads })
    const rep = await owner.ingest(items([citingRemoval, stale, backdated]))
    expect(rep.rejected).toEqual([
      { id: citingRemoval.id, reason: 'not_member' },
      { id: stale.id, reason: 'stale_acl_head' },
    ])
    expect(rep.voided).toEqual([backdated.id])
    expect((await owner.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 2 })
  })

  it('a removal arriving after the write it voids rebuilds the tree; a write the remover saw stays', async () => {
    const { owner, obj, replicaOf } = await setup()
    const w = await replicaOf(2)
    const third = await replicaOf(3)
    const before = await craft(w, keyFor(2), obj, { timestamp: 1 })
    // The removal witnesses what the remover holds of the member's writes: those stay.
    await owner.ingest(items([before]))
    await owner.removeMember(idFor(2))
    // On top of it, stamped after the removal, still citing the pre-removal ACL head.
    const st = w.acl.current()
    const payload = seal(seededEnv(11), w.keyring.get(st.readKeyId!)!, encodeCanonical({ ops: [{ op: 'set', ds: 'd', id: 'y', path: 'v', value: 'late' }] }))
    const late = await signChange(await defaultCryptoProvider(), keyFor(2), {
      spaceId: w.spaceId,
      treeId: obj,
      prevIds: [before.id],
      aclHeadId: before.aclHeadId,
      seq: 2,
      lamport: before.lamport + 1,
      timestamp: 2_000_000_000_001,
      readKeyId: st.readKeyId!,
      payload,
    })
    // A replica that sees the late write before the removal applies it...
    await third.ingest(items([before, late]))
    expect((await third.getRecord(obj, 'd', 'y'))?.value).toEqual({ v: 'late' })
    // ...and undoes it once the removal arrives, matching a replica that saw the removal first.
    await pushAll(owner, third)
    expect(await third.getRecord(obj, 'd', 'y')).toBeUndefined()
    const rep = await owner.ingest(items([before, late]))
    expect(rep.voided).toEqual([late.id])
    expect((await owner.getRecord(obj, 'd', 'x'))?.value).toEqual({ v: 666 })
    expect(await third.stateDigest()).toBe(await owner.stateDigest())
  })

  it('a change citing an unknown ACL record waits, and applies once the record arrives', async () => {
    const { owner, obj, replicaOf } = await setup()
    const w = await replicaOf(2)
    await owner.setRole(idFor(3), 'writer')
    const roleChange = (await owner.allChanges()).find((c) => c.id === (owner.acl.citation() as { head: string }).head)!
    await w.ingest([roleChange])
    const c = await craft(w, keyFor(2), obj)
    const lagging = await SpaceReplica.open(await deps(6), owner.spaceId, keyFor(1))
    await lagging.ingest((await owner.allChanges()).filter((x) => x.id !== roleChange.id))
    const first = await lagging.ingest(items([c]))
    expect(first.accepted).toEqual([])
    expect(first.missing).toEqual([roleChange.id])
    const second = await lagging.ingest([roleChange])
    expect(second.accepted).toEqual([roleChange.id, c.id])
  })
})
