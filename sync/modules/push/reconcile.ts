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

/** The chats of a space and their modes, or throws when they cannot be enumerated. */
export async function readModes(space: SpaceEngine, spaceMode: NotifyMode | undefined, isChatRow: (row: Record<string, unknown>) => boolean | Promise<boolean>): Promise<SpaceModes> {
  const chats = new Map<string, NotifyMode | undefined>()
  for (const doc of space.objectDocs()) {
    const row = doc as Record<string, unknown>
    if (typeof row.id !== 'string' || !(await isChatRow(row))) continue
    const chat = row.chat as Record<string, unknown> | undefined
    chats.set(row.id, asMode(chat?.notifyMode))
  }
  return { space: spaceMode, chats }
}
