import type { SpaceEngine } from '../../space/space-engine.ts'
import { ALL_CHATS_TOPIC, chatMentionTopic, chatTopic, identityTopic } from './topics.ts'

export type NotifyMode = 'all' | 'mentions' | 'none'
const MODES: readonly string[] = ['all', 'mentions', 'none']
export const asMode = (v: unknown): NotifyMode | undefined => (typeof v === 'string' && MODES.includes(v) ? (v as NotifyMode) : undefined)

/** One space's knobs: its `settings.notifyMode` and every chat's `chat.notifyMode` (undefined: inherit). */
export interface SpaceModes {
  space: NotifyMode | undefined
  chats: Map<string, NotifyMode | undefined>
}

/**
 * The topics an account holds for one space (chat.md "Push notifications"): with no per-chat
 * override, bulk topics (`all`: `chats` and `<identity>`; `mentions`: `<identity>`; `none`:
 * nothing); once any chat overrides, per-chat topics for every chat of the space.
 */
export function topicsFor(modes: SpaceModes, me: string): string[] {
  const spaceMode = modes.space ?? 'all'
  const overridden = [...modes.chats.values()].some((m) => m !== undefined)
  if (!overridden) return spaceMode === 'all' ? [ALL_CHATS_TOPIC, identityTopic(me)] : spaceMode === 'mentions' ? [identityTopic(me)] : []
  const out: string[] = []
  for (const [chatId, m] of [...modes.chats].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const mode = m ?? spaceMode
    if (mode === 'all') out.push(chatTopic(chatId), chatMentionTopic(chatId, me))
    else if (mode === 'mentions') out.push(chatMentionTopic(chatId, me))
  }
  return out
}

/** Each chat's own values of the account's scoped store (`chat.notifyMode` lives there), by chat id. */
export type ScopedRowsOf = (chatIds: string[]) => Promise<ReadonlyMap<string, Readonly<Record<string, Readonly<Record<string, unknown>>>>>>

/**
 * The chats of a space and their modes, or throws when they cannot be enumerated. A chat's
 * `notifyMode` is an account-scope value (docs/chat.md "Client writes and `chat.notifyMode`"): it
 * lives in the account's scoped store, not on the space's synced row, so it is read from there.
 */
export async function readModes(
  space: SpaceEngine,
  spaceMode: NotifyMode | undefined,
  isChatRow: (row: Record<string, unknown>) => boolean | Promise<boolean>,
  scopedRowsOf: ScopedRowsOf,
): Promise<SpaceModes> {
  const ids: string[] = []
  for (const doc of space.objectDocs()) {
    const row = doc as Record<string, unknown>
    if (typeof row.id === 'string' && (await isChatRow(row))) ids.push(row.id)
  }
  const scoped = ids.length ? await scopedRowsOf(ids) : new Map<string, never>()
  const chats = new Map<string, NotifyMode | undefined>()
  for (const id of ids) chats.set(id, asMode(scoped.get(id)?.chat?.notifyMode))
  return { space: spaceMode, chats }
}
