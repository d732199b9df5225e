/**
 * Issue 13, "How it is proven", end to end: real daemons of different accounts, each its own
 * process, sharing one space. The first run finds peers over mDNS (only inside
 * scripts/netns-run.sh); the second has mDNS off and meets through `POST /v1/peers` alone.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Keyring } from '../../sync/acl/keyring.ts'
import { AccountDevice } from './account-device.ts'
import {
  accept,
  active,
  addPeer,
  connected,
  Fleet,
  holdsRecords,
  inviteAndAccept,
  invite,
  join,
  me,
  p2pAddress,
  pendingRequest,
  put,
  recordIds,
  removeMember,
  S,
  type Account,
} from './accounts.ts'
import { api, IN_NETNS, ok, until } from './daemons.ts'

const fleet = new Fleet()
afterAll(() => fleet.close())

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const notes = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`)

/** Writes records one by one and returns their ids. */
async function write(a: Account, spaceId: string, objectId: string, ids: string[]) {
  for (const id of ids) {
    const r = await put(a, spaceId, objectId, 'notes', id, `${a.name}:${id}`)
    if (r.status !== 200) throw new Error(`${a.name} writes ${id}: ${r.status} ${JSON.stringify(r.json)}`)
  }
  return ids
}

/** A device of `a`'s account in this process, holding the space as `from`'s daemon serves it. */
async function deviceOf(a: Account, spaceId: string, from: Account = a) {
  const dev = await AccountDevice.start(a.key, spaceId)
  const { peerId, multiaddr } = await p2pAddress(from)
  await dev.dial(multiaddr, peerId)
  await dev.syncWith(peerId)
  return dev
}

/** The four accounts, the shared space and the one document every step writes notes to. */
interface SharingScene {
  owner: Account
  writer: Account
  reader: Account
  guest: Account
  spaceId: string
  doc: string
}

/** Invite, join, accept, over mDNS: nobody was given an address. Each member sees its role and the notes written before. */
async function joinByRole({ owner, writer, reader, guest, spaceId, doc }: SharingScene, before: string[]) {
  const j = await inviteAndAccept(owner, spaceId, writer, 'writer')
  expect(j.status).toBe('joining')
  await inviteAndAccept(owner, spaceId, reader, 'reader')
  await inviteAndAccept(owner, spaceId, guest, 'guest')
  for (const [a, role] of [
    [writer, 'writer'],
    [reader, 'reader'],
    [guest, 'guest'],
  ] as const) {
    expect((await ok(a.d, 'GET', S(spaceId))).ownRole).toBe(role)
    expect((await me(a, spaceId)).json).toMatchObject({ identity: a.identity })
    await holdsRecords(a, spaceId, doc, 'notes', before)
  }
}

/** The reader and the guest are refused by their own daemons, and by every daemon when their software signs writes anyway. */
async function readOnlyRefused({ owner, writer, reader, guest, spaceId, doc }: SharingScene) {
  for (const a of [reader, guest]) {
    const r = await put(a, spaceId, doc, 'notes', `${a.name}-local`, 1)
    expect(r.status).toBe(403)
    expect(r.json.error.code).toBe('space.read_only')
  }

  // Their software signs writes anyway and sends them straight to every daemon: all refuse.
  const forged: Array<{ id: string; record: string }> = []
  for (const a of [reader, guest]) {
    const dev = await deviceOf(a, spaceId, owner)
    const record = `${a.name}-forged`
    const change = await dev.craftWrite(doc, 'notes', record)
    forged.push({ id: change.id, record })
    for (const target of [owner, writer, reader, guest]) {
      const { peerId, multiaddr } = await p2pAddress(target)
      await dev.dial(multiaddr, peerId)
      // A round first: the link is authenticated, so the step is read, not stashed.
      await dev.syncWith(peerId)
      expect(await dev.push(peerId, [change]), `${target.name} read the push`).toBe('read')
    }
    await dev.close()
  }
  // A write after the forgeries has reached everyone: so would they, had anyone applied one.
  const afterForge = await write(writer, spaceId, doc, ['after-forge'])
  await Promise.all([owner, reader, guest].map((a) => holdsRecords(a, spaceId, doc, 'notes', afterForge)))
  for (const a of [owner, writer, reader, guest]) {
    const ids = await recordIds(a, spaceId, doc, 'notes')
    for (const f of forged) {
      expect(ids, `${a.name} holds ${f.record}`).not.toContain(f.record)
      expect((await api(a.d, 'GET', `${S(spaceId)}/objects/${doc}/history/${f.id}`)).status, `${a.name} knows change ${f.id}`).toBe(404)
    }
  }
}

/** The owner removes the writer; the others keep writing, and the removed writer gets none of it but keeps its old copy. */
async function removedWriterGetsNothingNew({ owner, writer, reader, guest, spaceId, doc }: SharingScene, old: string[]) {
  const writerHeld = await recordIds(writer, spaceId, doc, 'notes')
  await removeMember(owner, spaceId, writer)
  const after = await write(owner, spaceId, doc, notes('p', 5))
  await Promise.all([reader, guest].map((a) => holdsRecords(a, spaceId, doc, 'notes', after)))
  // The removed writer asks for a round and waits out a relay and a retry.
  await api(writer.d, 'POST', `${S(spaceId)}/sync`)
  await sleep(3_000)
  const writerNow = await recordIds(writer, spaceId, doc, 'notes')
  for (const id of after) expect(writerNow, `removed writer holds ${id}`).not.toContain(id)
  // Its old copy stays readable.
  for (const id of old) expect(writerNow).toContain(id)
  expect(writerNow.length).toBeGreaterThanOrEqual(writerHeld.length)
  // Whatever bytes reach it, none opens: the owner's whole ACL wraps the key it seals with now
  // to the others and not to the writer's account, nor links it from a key the writer has.
  const ownerDev = await deviceOf(owner, spaceId)
  const newKey = ownerDev.replica.acl.current().readKeyId!
  expect(ownerDev.replica.keyring.get(newKey)).toBeDefined()
  expect(new Keyring(ownerDev.replica.acl, reader.key).get(newKey), 'the reader reaches the new read key').toBeDefined()
  expect(new Keyring(ownerDev.replica.acl, writer.key).get(newKey), 'the removed writer reaches the new read key').toBeUndefined()
  await ownerDev.close()
}

/** Revoking the guest key: the guest keeps a readable copy and gets nothing written after. */
async function revokedGuestGetsNothingNew({ owner, reader, guest, spaceId, doc }: SharingScene, old: string[]) {
  expect((await api(owner.d, 'DELETE', `${S(spaceId)}/guest-key`)).status).toBe(204)
  const afterRevoke = await write(owner, spaceId, doc, notes('g', 3))
  await holdsRecords(reader, spaceId, doc, 'notes', afterRevoke)
  await api(guest.d, 'POST', `${S(spaceId)}/sync`)
  await sleep(2_000)
  const guestNow = await recordIds(guest, spaceId, doc, 'notes')
  for (const id of afterRevoke) expect(guestNow, `revoked guest holds ${id}`).not.toContain(id)
  for (const id of old) expect(guestNow).toContain(id)
}

/**
 * Asking about the space shows each its own removal (the removal notice): the guest's row
 * turns guest_revoked, the writer's stays with role none; both copies stay readable.
 */
async function removalsShown({ writer, guest, spaceId, doc }: SharingScene, before: string[]) {
  await until('the guest row is guest_revoked', async () => {
    await api(guest.d, 'POST', `${S(spaceId)}/sync`)
    return (await ok(guest.d, 'GET', S(spaceId))).status === 'guest_revoked'
  })
  await until('the removed writer sees role none', async () => {
    await api(writer.d, 'POST', `${S(spaceId)}/sync`)
    return (await ok(writer.d, 'GET', S(spaceId))).ownRole === 'none'
  })
  for (const id of before) {
    expect(await recordIds(guest, spaceId, doc, 'notes')).toContain(id)
    expect(await recordIds(writer, spaceId, doc, 'notes')).toContain(id)
  }
}

describe.runIf(IN_NETNS)('four accounts share a space over mDNS (owner, writer, reader, guest)', () => {
  it('invite, join and accept; writes reach everyone; read-only members are refused locally and on the wire; a removed writer gets nothing new', async () => {
    const [owner, writer, reader, guest] = await Promise.all(['owner', 'writer', 'reader', 'guest'].map((n) => fleet.account(n)))
    const space = await ok(owner.d, 'POST', '/v1/spaces', { name: 'Shared' })
    const doc = (await ok(owner.d, 'POST', `${S(space.id)}/objects`, {})).objectId
    const scene: SharingScene = { owner, writer, reader, guest, spaceId: space.id, doc }
    const before = await write(owner, space.id, doc, notes('o', 5))
    await joinByRole(scene, before)

    // The writer's writes reach every other account.
    const byWriter = await write(writer, space.id, doc, notes('w', 5))
    await Promise.all([owner, reader, guest].map((a) => holdsRecords(a, space.id, doc, 'notes', byWriter)))

    await readOnlyRefused(scene)
    await removedWriterGetsNothingNew(scene, [...before, ...byWriter])
    await revokedGuestGetsNothingNew(scene, [...before, ...byWriter])
    await removalsShown(scene, before)
  }, 600_000)
})

describe('two accounts with mDNS off meet through POST /v1/peers alone', () => {
  it('the joiner dials the owner it was given, joins, is accepted and syncs', async () => {
    const [owner, joiner] = await Promise.all(['owner2', 'joiner2'].map((n) => fleet.account(n, { mdns: false })))
    expect((await ok(owner.d, 'GET', '/v1/debug/p2p')).mdns).toBe(false)
    const space = await ok(owner.d, 'POST', '/v1/spaces', { name: 'Far' })
    const doc = (await ok(owner.d, 'POST', `${S(space.id)}/objects`, {})).objectId
    const before = await write(owner, space.id, doc, notes('o', 3))

    const added = await addPeer(joiner, owner)
    expect(added.status).toBeLessThan(300)
    const { peerId } = await p2pAddress(owner)
    expect((await ok(joiner.d, 'GET', '/v1/peers')).peers.map((p: any) => p.peerId)).toContain(peerId)
    await until('the joiner is connected to the owner', () => connected(joiner, owner))

    const token = await invite(owner, space.id, 'writer')
    expect((await join(joiner, token)).status).toBe(202)
    await pendingRequest(owner, space.id, joiner)
    await accept(owner, space.id, joiner)
    await active(joiner, space.id)
    await holdsRecords(joiner, space.id, doc, 'notes', before)
    const back = await write(joiner, space.id, doc, ['from-joiner'])
    await holdsRecords(owner, space.id, doc, 'notes', back)
  }, 300_000)
})
