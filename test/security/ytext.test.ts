import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { Awareness, encodeAwarenessUpdate } from 'y-protocols/awareness'
import type { Op } from '../../sync/crdt/ops.ts'
import { clientIdFor, seedClientFor, toB64, YTEXT_ROOT } from '../../sync/crdt/ytext.ts'
import { YTEXT_LIMITS } from '../../sync/crdt/ytext-limits.ts'
import { CURSOR_LIMITS } from '../../sync/modules/editor/cursor-limits.ts'
import { CursorPresence } from '../../sync/modules/editor/cursors.ts'
import { EventBus } from '../../sync/modules/events/bus.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'

/*
 * The text kind and cursor presence against a hostile member (sync/crdt/ytext.ts,
 * sync/modules/editor/cursors.ts): validly signed changes whose Yjs updates are not the signer's
 * own are dropped the same on every replica; cursor events cannot move another's cursor or
 * grow memory without bound.
 */

const ALICE = 1,
  BOB = 2
const DS = 'blocks'

async function setup() {
  const alice = await SpaceReplica.create(await deps(1), keyFor(ALICE))
  const obj = await alice.createObject()
  await alice.addMember(idFor(BOB), 'writer')
  await alice.write(obj, [{ op: 'set', ds: DS, id: 'b', path: '', value: { text: '' } }])
  const bob = await SpaceReplica.open(await deps(2), alice.spaceId, keyFor(BOB))
  await pushAll(alice, bob)
  return { alice, bob, obj }
}

/** An update inserting `s` under `client` into an empty text. */
function insertUnder(client: number, s: string, build?: (t: Y.Text) => void): Uint8Array {
  const d = new Y.Doc()
  d.clientID = client
  const t = d.getText(YTEXT_ROOT)
  if (build) build(t)
  else t.insert(0, s)
  return Y.encodeStateAsUpdate(d)
}
const ytextOp = (u: Uint8Array, salt: string): Op => ({ op: 'ytext', ds: DS, id: 'b', path: 'text', update: toB64(u), salt })
const textOf = async (r: SpaceReplica, obj: string) => ((await r.getRecord(obj, DS, 'b'))?.value as { text?: string }).text

describe('A member writes text under another writer\u2019s Yjs client id', () => {
  it('the op is dropped on the forger and on every peer (merge.invalid); state stays identical', async () => {
    const { alice, bob, obj } = await setup()
    const forged = insertUnder(clientIdFor(idFor(ALICE), 'alice-salt'), 'forged')
    const res = await bob.write(obj, [ytextOp(forged, 'bob-salt')])
    expect(res.rejections?.[0]).toMatchObject({ code: 'merge.invalid' })
    // Claiming the other's salt does not help: the client id also binds the signer.
    const res2 = await bob.write(obj, [ytextOp(forged, 'alice-salt')])
    expect(res2.rejections?.[0]).toMatchObject({ code: 'merge.invalid' })
    await pushAll(bob, alice)
    expect(await textOf(alice, obj)).toBe('')
    expect(await textOf(bob, obj)).toBe('')
    expect(await alice.stateDigest()).toBe(await bob.stateDigest())
  })

  it('a false seed (content that does not hash to its client id) is dropped; a true seed is accepted', async () => {
    const { alice, bob, obj } = await setup()
    const fake = insertUnder(seedClientFor('hello'), 'other')
    expect((await bob.write(obj, [ytextOp(fake, 's')])).rejections?.[0]).toMatchObject({ code: 'merge.invalid' })
    const real = insertUnder(seedClientFor('hello'), 'hello')
    expect((await bob.write(obj, [ytextOp(real, 's')])).rejections).toBeUndefined()
    await pushAll(bob, alice)
    expect(await textOf(alice, obj)).toBe('hello')
  })
})

describe('A member sends updates that are not plain text', () => {
  it('formatting, embeds and bytes that are not a Yjs update are dropped everywhere', async () => {
    const { alice, bob, obj } = await setup()
    const me = clientIdFor(idFor(BOB), 's')
    const formatted = insertUnder(me, '', (t) => t.insert(0, 'bold', { bold: true }))
    const embed = insertUnder(me, '', (t) => t.insertEmbed(0, { image: 'x' }))
    for (const u of [formatted, embed, new Uint8Array([1, 2, 3, 4, 5, 6])]) {
      expect((await bob.write(obj, [ytextOp(u, 's')])).rejections?.[0]).toMatchObject({ code: 'merge.invalid' })
    }
    await pushAll(bob, alice)
    expect(await textOf(alice, obj)).toBe('')
    expect(await alice.stateDigest()).toBe(await bob.stateDigest())
  })

  it('an update over the size limit, or not base64, makes the change malformed (refused at write, rejected on ingest)', async () => {
    const { bob, obj } = await setup()
    const big = insertUnder(clientIdFor(idFor(BOB), 's'), 'x'.repeat(YTEXT_LIMITS.maxUpdateBytes + 10))
    await expect(bob.write(obj, [ytextOp(big, 's')])).rejects.toMatchObject({ code: 'request.invalid_field' })
    await expect(bob.write(obj, [{ op: 'ytext', ds: DS, id: 'b', path: 'text', update: 'not base64!', salt: 's' }])).rejects.toMatchObject({ code: 'request.invalid_field' })
    await expect(bob.write(obj, [{ op: 'ytext', ds: DS, id: 'b', path: '', update: toB64(new Uint8Array([0, 0])), salt: 's' }])).rejects.toMatchObject({
      code: 'request.invalid_field',
    })
  })
})

/** A bus with one full member, and presence bound to it. */
function presenceOn(spaceId: string) {
  let now = 1_000
  const env = { ...seededEnv(7), now: () => now }
  const bus = new EventBus({ accountId: idFor(ALICE), requireFullMember: () => undefined }, () => now)
  const p = new CursorPresence(idFor(ALICE), env).bind(bus)
  return { bus, p, advance: (ms: number) => (now += ms), spaceId }
}
const cursorEvent = (spaceId: string, aw: Awareness, clients = [aw.clientID]) => ({
  type: 'editor.cursor.x',
  scope: 'space' as const,
  spaceId,
  target: 'obj',
  data: { update: toB64(encodeAwarenessUpdate(aw, clients)) },
})
const state = (blockId: string) => ({ objectId: 'obj', collection: 'editor_blocks', blockId, anchor: 'AA==', head: 'AA==', name: 'n' })

describe('A member reuses another member\u2019s awareness client id', () => {
  it('cannot move or remove the other\u2019s cursor: each sender has its own awareness', async () => {
    const { bus, p } = presenceOn('S')
    // The presence table listens once asked about the space.
    ;(p as unknown as { presence(s: string): unknown }).presence('S')
    const carol = new Awareness(new Y.Doc())
    carol.setLocalState(state('carol-block'))
    bus.deliverRemote(cursorEvent('S', carol), 'carol')
    const mallory = new Awareness(new Y.Doc())
    mallory.clientID = carol.clientID
    mallory.meta.set(carol.clientID, { clock: 1_000, lastUpdated: 0 })
    mallory.setLocalState(null)
    bus.deliverRemote(cursorEvent('S', mallory), 'mallory')
    const entries = (p as unknown as { spaces: Map<string, { entries: Map<string, { state: { blockId: string } }> }> }).spaces.get('S')!.entries
    expect([...entries.values()].map((e) => e.state.blockId)).toEqual(['carol-block'])
    for (const a of [carol, mallory]) a.destroy()
  })
})

describe('A member floods cursor presence', () => {
  it('clients per sender and senders per space are bounded; states that are not cursors are never listed', async () => {
    const { bus, p } = presenceOn('S')
    ;(p as unknown as { presence(s: string): unknown }).presence('S')
    const spaces = (p as unknown as { spaces: Map<string, { entries: Map<string, unknown>; senders: Map<string, unknown> }> }).spaces
    const docs: Awareness[] = []
    for (let i = 0; i < CURSOR_LIMITS.maxClientsPerSender + 5; i++) {
      const a = new Awareness(new Y.Doc())
      a.setLocalState(state(`b${i}`))
      docs.push(a)
      bus.deliverRemote(cursorEvent('S', a), 'mallory')
    }
    expect(spaces.get('S')!.entries.size).toBeLessThanOrEqual(CURSOR_LIMITS.maxClientsPerSender)
    for (let i = 0; i < CURSOR_LIMITS.maxSendersPerSpace + 10; i++) bus.deliverRemote(cursorEvent('S', docs[0]), `sender-${i}`)
    expect(spaces.get('S')!.senders.size).toBeLessThanOrEqual(CURSOR_LIMITS.maxSendersPerSpace)
    const junk = new Awareness(new Y.Doc())
    junk.setLocalState({ objectId: 'obj', evil: true })
    const before = spaces.get('S')!.entries.size
    bus.deliverRemote(cursorEvent('S', junk), 'sender-1')
    expect(spaces.get('S')!.entries.size).toBe(before)
    for (const a of [...docs, junk]) a.destroy()
    p.close()
  })
})
