import { encodeCanonical } from '../../../core/encoding.ts'
import { contentId } from '../../../crypto/hash.ts'
import type { Json } from '../../../crdt/ops.ts'
import { isObject } from '../../../crdt/path.ts'

/**
 * Read state of chat messages (chat.md "Chat read state"), as pure functions of two inputs
 * every device of an account can hold: the messages (records of `chat_messages`) and the
 * account's read marks (marks.ts). Nothing here depends on arrival order or on which device
 * computes it, which is what lets two devices holding the same messages and the same marks
 * show the same flags, and the simulator's checker recompute them from scratch.
 *
 * Marks only ever grow (forward-only): `read` holds message ids, `mentionSeen` the mention
 * versions seen per message, `reactionSeen` the reaction leaves seen per message. A flag is:
 * - `unread`: another account wrote the message and it is not in `read` (own messages are
 *   born read; an edit changes nothing here, so edits never re-flag);
 * - `unreadMention`: another account wrote it, its current `mentions` lists the account, and
 *   its current mention version (the text that mentions) was not seen. Re-edits collapse: one
 *   flag per message whatever the number of versions;
 * - `unreadReactions`: the account wrote it and a current reaction leaf of another account
 *   was not seen. A reaction added and removed before viewing is no current leaf: no trace.
 */

/** What read state needs of one message. */
export interface MessageFacts {
  id: string
  /** `_ver.id`: the order of messages (set at creation, never changed by edits). */
  verId: string
  creator: string
  /** Whether `mentions` lists the account (and another account wrote it). */
  mentionsMe: boolean
  /** The version of the text that mentions the account (set when `mentionsMe`). */
  mentionKey?: string
  /** Keys of the current reaction leaves of other accounts (only on the account's own messages). */
  reactionKeys: string[]
}

export interface ChatMarks {
  read: Set<string>
  mentionSeen: Map<string, Set<string>>
  reactionSeen: Map<string, Set<string>>
}

export interface Flags {
  unread: boolean
  unreadMention: boolean
  unreadReactions: boolean
}

export interface Counters {
  unreadCount: number
  unreadMentions: number
  unreadReactionsCount: number
}

export const emptyMarks = (): ChatMarks => ({ read: new Set(), mentionSeen: new Map(), reactionSeen: new Map() })

/** A short content key: 16 base58 characters of SHA-256 (a path segment: no dots). */
const keyOf = (v: unknown): string => contentId(encodeCanonical(v)).slice(0, 16)

/**
 * The facts of a message record for account `me`. `value` is the record as merge left it;
 * `creator` is the stamped field (chat's write rule, authorship.ts, fixes it to the creating change's
 * author), else the author of the record's first op.
 */
export function factsOf(id: string, verId: string, value: Json | undefined, fallbackCreator: string, me: string): MessageFacts {
  const v = isObject(value) ? value : {}
  const creator = typeof v.creator === 'string' ? v.creator : fallbackCreator
  const mine = creator === me
  const mentions = Array.isArray(v.mentions) ? v.mentions : []
  // Self-mentions list the account but never badge.
  const mentionsMe = !mine && mentions.includes(me)
  const facts: MessageFacts = { id, verId, creator, mentionsMe, reactionKeys: [] }
  if (mentionsMe) facts.mentionKey = keyOf(['m', typeof v.text === 'string' ? v.text : '', mentions])
  if (mine && isObject(v.reactions)) {
    for (const emoji of Object.keys(v.reactions).sort()) {
      const leaves = v.reactions[emoji]
      if (!isObject(leaves)) continue
      for (const identity of Object.keys(leaves).sort()) {
        // The account's own reactions on its own messages never badge.
        if (identity !== me) facts.reactionKeys.push(keyOf(['x', emoji, identity, leaves[identity]]))
      }
    }
  }
  return facts
}

export function flagsOf(f: MessageFacts, me: string, marks: ChatMarks): Flags {
  const mine = f.creator === me
  return {
    unread: !mine && !marks.read.has(f.id),
    unreadMention: f.mentionsMe && f.mentionKey !== undefined && !marks.mentionSeen.get(f.id)?.has(f.mentionKey),
    unreadReactions: mine && f.reactionKeys.some((k) => !marks.reactionSeen.get(f.id)?.has(k)),
  }
}

export function countersOf(messages: Iterable<MessageFacts>, me: string, marks: ChatMarks): Counters {
  const c: Counters = { unreadCount: 0, unreadMentions: 0, unreadReactionsCount: 0 }
  for (const f of messages) {
    const fl = flagsOf(f, me, marks)
    if (fl.unread) c.unreadCount++
    if (fl.unreadMention) c.unreadMentions++
    if (fl.unreadReactions) c.unreadReactionsCount++
  }
  return c
}

/** Marks to add: what reading some messages sets (new leaves only; marks never shrink). */
export interface MarkAdds {
  read: string[]
  mention: Array<[msgId: string, key: string]>
  reaction: Array<[msgId: string, key: string]>
}

export const noAdds = (): MarkAdds => ({ read: [], mention: [], reaction: [] })

export const isEmpty = (a: MarkAdds) => a.read.length === 0 && a.mention.length === 0 && a.reaction.length === 0

/**
 * Viewing a message: it is read, and the mention version it shows is seen. (Reactions are
 * cleared only by reactions-read, their own route.)
 */
function viewAdds(f: MessageFacts, me: string, marks: ChatMarks, into: MarkAdds) {
  if (f.creator !== me && !marks.read.has(f.id)) into.read.push(f.id)
  if (f.mentionsMe && f.mentionKey && !marks.mentionSeen.get(f.id)?.has(f.mentionKey)) into.mention.push([f.id, f.mentionKey])
}

/**
 * `POST .../messages/:msgId/read`: every message held now whose `_ver.id` is at or below the
 * target's. A message arriving later with a lower `_ver.id` stays unread: that is how more than
 * one unread region exists.
 */
export function readUpTo(messages: Iterable<MessageFacts>, target: MessageFacts, me: string, marks: ChatMarks): MarkAdds {
  const out = noAdds()
  for (const f of messages) if (f.verId <= target.verId) viewAdds(f, me, marks, out)
  return out
}

/** `POST .../read-all`: every message held now. */
export function readAll(messages: Iterable<MessageFacts>, me: string, marks: ChatMarks): MarkAdds {
  const out = noAdds()
  for (const f of messages) viewAdds(f, me, marks, out)
  return out
}

/**
 * `POST .../messages/:msgId/reactions-read`: the message's current reaction leaves are seen,
 * and the messages in `ancestry` (those whose creating change is in the causal past of a
 * reaction's change: the reactor had them when reacting) are read.
 */
export function reactionsRead(target: MessageFacts, ancestry: Iterable<MessageFacts>, me: string, marks: ChatMarks): MarkAdds {
  const out = noAdds()
  const seen = marks.reactionSeen.get(target.id)
  for (const k of target.reactionKeys) if (!seen?.has(k)) out.reaction.push([target.id, k])
  for (const f of ancestry) if (f.creator !== me && !marks.read.has(f.id)) out.read.push(f.id)
  return out
}

/** Folds adds into marks (what the tech-space records will say once written). */
export function applyAdds(marks: ChatMarks, adds: MarkAdds): void {
  for (const id of adds.read) marks.read.add(id)
  for (const [id, k] of adds.mention) addTo(marks.mentionSeen, id, k)
  for (const [id, k] of adds.reaction) addTo(marks.reactionSeen, id, k)
}

export function addTo(map: Map<string, Set<string>>, id: string, k: string) {
  let s = map.get(id)
  if (!s) map.set(id, (s = new Set()))
  s.add(k)
}
