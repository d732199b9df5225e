import { CHANGE_DERIVED_ID, type JsonObject } from '../../sync/crdt/ops.ts'
import { chatReadModule } from '../../sync/modules/chat/read-state/module.ts'
import { CHAT_COLLECTION } from '../../sync/modules/chat/read-state/service.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { setupUsecase } from '../../sync/space/catalog/setup.ts'
import { instant } from '../../sync/space/rows.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'

/**
 * Chat messages written the way the chat service writes them (chat-msg): created under the
 * change-derived id with the stamped creator, edits of text/mentions/modifiedAt, and
 * reactions as `$set`/`$unset` of `reactions.<emoji>.<identity>`.
 */
export async function send(space: SpaceEngine, chatId: string, text: string, extra: JsonObject = {}): Promise<string> {
  const now = instant(space.env.now())
  const value: JsonObject = { creator: space.replica.me, createdAt: now, modifiedAt: now, text, ...extra }
  const res = await space.write(chatId, [{ op: 'set', ds: CHAT_COLLECTION, id: CHANGE_DERIVED_ID, path: '', value }])
  return res.recordIds[0]
}

export async function edit(space: SpaceEngine, chatId: string, msgId: string, text: string, mentions?: string[]) {
  await space.write(chatId, [
    { op: 'set', ds: CHAT_COLLECTION, id: msgId, path: 'text', value: text },
    mentions ? { op: 'set', ds: CHAT_COLLECTION, id: msgId, path: 'mentions', value: mentions } : { op: 'unset', ds: CHAT_COLLECTION, id: msgId, path: 'mentions' },
    { op: 'set', ds: CHAT_COLLECTION, id: msgId, path: 'modifiedAt', value: instant(space.env.now()) },
  ])
}

export async function react(space: SpaceEngine, chatId: string, msgId: string, emoji: string, on = true) {
  const path = `reactions.${emoji}.${space.replica.me}`
  await space.write(chatId, [on ? { op: 'set', ds: CHAT_COLLECTION, id: msgId, path, value: instant(space.env.now()) } : { op: 'unset', ds: CHAT_COLLECTION, id: msgId, path }])
}

export const readState = (space: SpaceEngine) => space.services.of(chatReadModule)

/** Installs the general chat (catalog), returning its root id. */
export async function generalChat(space: SpaceEngine): Promise<string> {
  const res = await setupUsecase(space.services.bundles, 'general-chat')
  return res.bundles[0].bundle.rootId
}

/** Members 1 (owner), 2 and 3 (writers) of one space with its general chat; `sync(...)` pushes among the given ones. */
export async function threeMembers() {
  const a = await SpaceEngine.create(await deps(1), keyFor(1), { modules: DEFAULT_MODULES })
  await a.replica.addMember(idFor(2), 'writer')
  await a.replica.addMember(idFor(3), 'writer')
  const chatId = await generalChat(a)
  const b = await SpaceEngine.open(await deps(2), a.spaceId, keyFor(2), { modules: DEFAULT_MODULES })
  const c = await SpaceEngine.open(await deps(3), a.spaceId, keyFor(3), { modules: DEFAULT_MODULES })
  const sync = async (...who: SpaceEngine[]) => {
    const list = who.length ? who : [a, b, c]
    for (const x of list) for (const y of list) if (x !== y) await pushAll(x.replica, y.replica)
    for (const x of list) await x.settled()
    for (const x of list) await readState(x).settled()
  }
  await sync()
  return { a, b, c, chatId, sync }
}
