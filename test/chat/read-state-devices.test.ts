import { describe, expect, it } from 'vitest'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { CHAT_COLLECTION } from '../../sync/modules/chat/read-state/service.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import type { SpaceChange, SpaceEngine } from '../../sync/space/space-engine.ts'
import type { StorageAdapter } from '../../sync/storage/adapter.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'
import { SpaceEngine as Engine } from '../../sync/space/space-engine.ts'
import { generalChat, readState, send } from './read-state-helpers.ts'

async function device(seed: number, storage: StorageAdapter = new MemoryStorageAdapter()) {
  return AccountEngine.open({ storage, crypto: await defaultCryptoProvider(), env: seededEnv(seed), accountKey: keyFor(1), modules: DEFAULT_MODULES })
}

/** Two devices of account 1 holding one space with its general chat, and account 2 writing in it. */
async function setup() {
  const storageB = new MemoryStorageAdapter()
  const devA = await device(11)
  const devB = await device(12, storageB)
  const info = await devA.createSpace({ name: 'team' })
  const spaceA = devA.space(info.id)
  const chatId = await generalChat(spaceA)
  await spaceA.replica.addMember(idFor(2), 'writer')
  await pushAll(devA.tech.replica, devB.tech.replica)
  await devB.tech.settled()
  const spaceB = await devB.adopt(info.id)
  const other = await Engine.open(await deps(2), info.id, keyFor(2), { modules: DEFAULT_MODULES })
  const spaces = () => [devA.held(info.id)!, devB.held(info.id)!, other]
  /** Every replica of the shared space with every other; then readable everywhere. */
  const syncSpace = async () => {
    const list = spaces()
    for (const x of list) for (const y of list) if (x !== y) await pushAll(x.replica, y.replica)
    await settle(list)
  }
  /** The account's tech space between its two devices, one way or both. */
  const syncTech = async (from = devA, to = devB) => {
    await pushAll(from.tech.replica, to.tech.replica)
    await to.tech.settled()
    await settle(spaces())
  }
  await syncSpace()
  return { devA, devB, storageB, spaceA, spaceB, other, chatId, syncSpace, syncTech, spaceId: info.id }
}

async function settle(list: SpaceEngine[]) {
  for (let i = 0; i < 2; i++) for (const x of list) await readState(x).settled()
}

const unread = async (space: SpaceEngine, chatId: string) =>
  (await space.datasetDocs(chatId, CHAT_COLLECTION))
    .filter((d) => d.unread)
    .map((d) => d.id)
    .sort()

describe("chat read state across the account's own devices", () => {
  it('a read on one device clears the flags and counters on the other once the tech space syncs, framed as updated', async () => {
    const { spaceA, spaceB, other, chatId, syncSpace, syncTech } = await setup()
    const m1 = await send(other, chatId, 'one')
    const m2 = await send(other, chatId, 'two')
    const m3 = await send(other, chatId, 'three')
    await syncSpace()
    expect(await unread(spaceA, chatId)).toEqual([m1, m2, m3].sort())
    expect(await unread(spaceB, chatId)).toEqual([m1, m2, m3].sort())
    expect(spaceB.objectDoc(chatId)?.chat).toMatchObject({ unreadCount: 3 })
    const changesOfOther = (await other.replica.allChanges()).length
    await readState(spaceA).read(chatId, m2)
    expect(await unread(spaceA, chatId)).toEqual([m3])
    // Still unread on B until the tech space syncs; reading wrote nothing into the shared space.
    expect(await unread(spaceB, chatId)).toEqual([m1, m2, m3].sort())
    await syncSpace()
    expect((await other.replica.allChanges()).length).toBe(changesOfOther)
    const seen: SpaceChange[] = []
    const off = spaceB.events.on('change', (c) => seen.push(c))
    await syncTech()
    off()
    expect(await unread(spaceB, chatId)).toEqual([m3])
    expect(spaceB.objectDoc(chatId)?.chat).toMatchObject({ unreadCount: 1 })
    const recOps = Object.fromEntries(seen.flatMap((c) => [...(c.records.get(chatId)?.get(CHAT_COLLECTION) ?? [])]))
    expect(recOps).toEqual({ [m1]: [{ type: '$unset', path: 'unread' }], [m2]: [{ type: '$unset', path: 'unread' }] })
    expect(seen.flatMap((c) => c.rowOps.get(chatId) ?? [])).toEqual([{ type: '$set', path: 'chat.unreadCount', value: 1 }])
  })

  it('reads made offline on both devices merge forward-only (a union), whatever the order', async () => {
    const { devA, devB, spaceA, spaceB, other, chatId, syncSpace, syncTech } = await setup()
    const me = idFor(1)
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push(await send(other, chatId, `m${i} svc://m/x/${me}`, { mentions: [me] }))
    await syncSpace()
    // Offline: A reads the first, B the third; neither has seen the other's marks.
    await readState(spaceA).read(chatId, ids[0])
    await readState(spaceB).read(chatId, ids[2])
    expect(spaceA.objectDoc(chatId)?.chat).toMatchObject({ unreadCount: 3, unreadMentions: 3 })
    expect(spaceB.objectDoc(chatId)?.chat).toMatchObject({ unreadCount: 1, unreadMentions: 1 })
    await syncTech(devB, devA)
    await syncTech(devA, devB)
    for (const s of [spaceA, spaceB]) {
      expect(await unread(s, chatId)).toEqual([ids[3]])
      expect(s.objectDoc(chatId)?.chat).toEqual({ unreadCount: 1, unreadMentions: 1, unreadReactionsCount: 0 })
    }
  })

  it('own messages are born read on every device of the account; marks survive a restart', async () => {
    const { spaceA, other, chatId, syncSpace, syncTech, storageB, spaceId } = await setup()
    const own = await send(spaceA, chatId, 'from device A')
    const theirs = await send(other, chatId, 'theirs')
    await syncSpace()
    await readState(spaceA).readAll(chatId)
    await syncTech()
    const reopened = await device(13, storageB)
    const space = reopened.held(spaceId)!
    expect(await unread(space, chatId)).toEqual([])
    expect(space.objectDoc(chatId)?.chat).toEqual({ unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 })
    expect((await space.datasetDocs(chatId, CHAT_COLLECTION)).map((d) => d.id).sort()).toEqual([own, theirs].sort())
  })
})
