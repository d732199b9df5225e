import { beforeAll, describe, expect, it } from 'vitest'
import { ensureXxh3, propertyIdSync } from '../../sync/crypto/hash.ts'
import { CHANGE_DERIVED_ID, type Json, type Op } from '../../sync/crdt/ops.ts'
import { decodeChange } from '../../sync/dag/change.ts'
import { chatModule } from '../../sync/modules/chat/module.ts'
import { SpaceReplica, type ReplicaDeps } from '../../sync/replica/space-replica.ts'
import { ModuleSet } from '../../sync/space/module.ts'
import { spacePolicy } from '../../sync/space/schema.ts'
import { instant } from '../../sync/space/rows.ts'
import { sealedWrite } from '../../sim/attacks.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'

/*
 * Chat authorship holds on changes from peers, not only on the chat routes (chat.md
 * Authentication 2): another member of the space builds changes on the chat dataset with its
 * own, validly signed writes, and every replica drops the same ops, whatever order the
 * changes arrive in (sync/modules/chat/authorship.ts, sync/crdt/ruled-record.ts).
 */

const ALICE = 1,
  BOB = 2
const DS = 'chat_messages'
const policy = new ModuleSet([chatModule]).policy(spacePolicy)
const chatDeps = async (seed: number): Promise<ReplicaDeps> => ({ ...(await deps(seed)), policy })

beforeAll(async () => ensureXxh3())

/** Alice's space with a chat-carrying tree (the dataset's rule does not depend on the carrier) and Bob as a writer. */
async function setup() {
  const alice = await SpaceReplica.create(await chatDeps(1), keyFor(ALICE))
  const chat = await alice.createObject()
  await alice.addMember(idFor(BOB), 'writer')
  const bob = await SpaceReplica.open(await chatDeps(2), alice.spaceId, keyFor(BOB))
  await pushAll(alice, bob)
  return { alice, bob, chat }
}

/** What the chat route writes for a new message (server/modules/chat.ts via ChatMessages.send). */
const createOps = (author: number, text: string): Op[] => [
  { op: 'set', ds: DS, id: CHANGE_DERIVED_ID, path: '', value: { creator: idFor(author), createdAt: instant(1), modifiedAt: instant(1), text } },
]
const setOp = (id: string, path: string, value: Json): Op => ({ op: 'set', ds: DS, id, path, value })

async function send(r: SpaceReplica, chat: string, author: number, text: string): Promise<string> {
  const res = await r.write(chat, createOps(author, text))
  return propertyIdSync(res.changeId)
}

const value = async (r: SpaceReplica, chat: string, id: string) => (await r.getRecord(chat, DS, id))?.value as Record<string, Json> | undefined

async function converge(a: SpaceReplica, b: SpaceReplica) {
  await pushAll(a, b)
  await pushAll(b, a)
  expect(await a.stateDigest()).toBe(await b.stateDigest())
}

describe('A member edits, deletes or reacts for another member with its own signed changes', () => {
  it('the forged ops are dropped on the forger and on every peer; its own reaction leaf stands', async () => {
    const { alice, bob, chat } = await setup()
    const msg = await send(alice, chat, ALICE, 'original')
    await pushAll(alice, bob)
    // Bob's replica writes straight into the dataset, past any route.
    const forged = await bob.write(chat, [
      setOp(msg, 'text', 'forged by bob'),
      setOp(msg, 'creator', idFor(BOB)),
      setOp(msg, `reactions.👍.${idFor(ALICE)}`, instant(2)),
      setOp(msg, `reactions.👍.${idFor(BOB)}`, instant(3)),
    ])
    expect(forged.rejections?.map((r) => [r.index, r.code])).toEqual([
      [0, 'merge.refused'],
      [1, 'merge.refused'],
      [2, 'merge.refused'],
    ])
    const del = await bob.write(chat, [{ op: 'delete', ds: DS, id: msg }])
    expect(del.rejections?.[0].code).toBe('merge.refused')
    await converge(alice, bob)
    for (const r of [alice, bob]) {
      expect(await value(r, chat, msg)).toEqual({
        creator: idFor(ALICE),
        createdAt: instant(1),
        modifiedAt: instant(1),
        text: 'original',
        reactions: { '👍': { [idFor(BOB)]: instant(3) } },
      })
    }
    // The author's own edit and delete still go through.
    await alice.write(chat, [setOp(msg, 'text', 'edited')])
    await converge(alice, bob)
    expect((await value(bob, chat, msg))?.text).toBe('edited')
    await alice.write(chat, [{ op: 'delete', ds: DS, id: msg }])
    await converge(alice, bob)
    expect((await bob.getRecord(chat, DS, msg))?.deleted).toBe(true)
  })

  it('a message created under a foreign creator, or with reactions already in it, never appears', async () => {
    const { alice, bob, chat } = await setup()
    const asAlice = await send(bob, chat, ALICE, 'I am alice')
    const withReactions = propertyIdSync(
      (await bob.write(chat, [{ ...createOps(BOB, 'x')[0], value: { creator: idFor(BOB), text: 'x', reactions: { '👍': { [idFor(ALICE)]: instant(1) } } } } as Op])).changeId,
    )
    await converge(alice, bob)
    for (const r of [alice, bob]) {
      expect(await value(r, chat, asAlice)).toBeUndefined()
      expect(await value(r, chat, withReactions)).toBeUndefined()
    }
  })
})

describe('A member forges a concurrent edit stamped before the create (a low lamport)', () => {
  it('refused whichever of the two a replica applies first', async () => {
    const { alice, bob, chat } = await setup()
    // Alice's tree moves ahead, so her message is stamped well above anything Bob builds on.
    for (let i = 0; i < 3; i++) await alice.write(chat, [setOp('other', 'n', i)])
    const msg = await send(alice, chat, ALICE, 'original')
    // Bob learned the message id out of band and writes on the old heads: lamport 2 against 5.
    const forged = await bob.write(chat, [setOp(msg, '', { creator: idFor(BOB), text: 'mine' }), setOp(msg, 'text', 'mine')])
    expect(forged.rejections).toHaveLength(2)
    const forgedChange = decodeChange((await bob.rawChanges(chat, [forged.changeId]))[0].raw)
    const createLamport = (await alice.getRecord(chat, DS, msg))!.created.l
    expect(forgedChange.lamport).toBeLessThan(createLamport)
    // A third replica takes the forgery first, then the create; Alice the other way round.
    const carol = await SpaceReplica.open(await chatDeps(3), alice.spaceId, keyFor(ALICE))
    await pushAll(bob, carol)
    await pushAll(alice, carol)
    await converge(alice, bob)
    expect(await carol.stateDigest()).toBe(await alice.stateDigest())
    for (const r of [alice, bob, carol]) {
      const rec = await r.getRecord(chat, DS, msg)
      expect(rec?.value).toMatchObject({ creator: idFor(ALICE), text: 'original' })
      expect(rec?.created.c).not.toBe(forged.changeId)
    }
  })

  it("the author's own edit that does not descend from the create applies the same on every replica", async () => {
    const { alice, bob, chat } = await setup()
    const before = alice.heads(chat)
    const lamport = alice.treeMeta(chat)!.maxLamport
    const created = await alice.write(chat, createOps(ALICE, 'original'))
    const msg = propertyIdSync(created.changeId)
    // Crafted by Alice's key on the heads before her create, stamped after it: it may reach a
    // replica first (it does not cite the create) and must then wait for the create.
    const cite = decodeChange((await alice.rawChanges(chat, [created.changeId]))[0].raw)
    const d = await deps(9)
    const edit = await sealedWrite(
      d.crypto,
      seededEnv(9),
      keyFor(ALICE),
      {
        spaceId: alice.spaceId,
        treeId: chat,
        prevIds: before,
        aclHeadId: cite.aclHeadId,
        lamport: lamport + 5,
        timestamp: 2,
        readKeyId: cite.readKeyId,
        seq: 99,
      },
      alice.keyring.get(cite.readKeyId)!,
      [setOp(msg, 'text', 'edited out of order')],
    )
    expect((await bob.ingest([{ id: edit.id, raw: edit.raw }])).accepted).toEqual([edit.id])
    expect(await value(bob, chat, msg)).toBeUndefined()
    expect((await alice.ingest([{ id: edit.id, raw: edit.raw }])).accepted).toEqual([edit.id])
    await converge(alice, bob)
    expect((await value(bob, chat, msg))?.text).toBe('edited out of order')
  })
})
