import type { Doc } from '../../../space/rows.ts'
import type { ChatMarks, Counters, Flags } from './compute.ts'

/**
 * How the read state's moves show: flags laid on documents, and the frame ops live windows get
 * when flags or counters move (sync/modules/chat/read-state/service.ts announces them).
 */
const FLAG_NAMES = ['unread', 'unreadMention', 'unreadReactions'] as const
export type FrameOps = Array<{ type: '$set' | '$unset'; path: string; value?: unknown }>

/** Lays flags on a document the space built for this call (the overlay contract: it may change it). */
export function setFlags(doc: Doc, unread: boolean, unreadMention: boolean, unreadReactions: boolean) {
  // Whatever a record holds under these names, the engine's value is what shows.
  if (unread) doc.unread = true
  else if ('unread' in doc) delete doc.unread
  if (unreadMention) doc.unreadMention = true
  else if ('unreadMention' in doc) delete doc.unreadMention
  if (unreadReactions) doc.unreadReactions = true
  else if ('unreadReactions' in doc) delete doc.unreadReactions
}

export function flagOps(before: Flags, after: Flags): FrameOps {
  const ops: FrameOps = []
  for (const name of FLAG_NAMES) {
    if (before[name] === after[name]) continue
    ops.push(after[name] ? { type: '$set', path: name, value: true } : { type: '$unset', path: name })
  }
  return ops
}

export function counterOps(after: Counters, before?: Counters): FrameOps {
  const ops: FrameOps = []
  for (const k of ['unreadCount', 'unreadMentions', 'unreadReactionsCount'] as const) {
    if (!before || before[k] !== after[k]) ops.push({ type: '$set', path: `chat.${k}`, value: after[k] })
  }
  return ops
}

export const COUNTERS_GONE: FrameOps = [
  { type: '$unset', path: 'chat.unreadCount' },
  { type: '$unset', path: 'chat.unreadMentions' },
  { type: '$unset', path: 'chat.unreadReactionsCount' },
]

export function count(c: Counters, f: Flags, by: 1 | -1) {
  if (f.unread) c.unreadCount += by
  if (f.unreadMention) c.unreadMentions += by
  if (f.unreadReactions) c.unreadReactionsCount += by
}

export const sameCounters = (a: Counters, b: Counters) =>
  a.unreadCount === b.unreadCount && a.unreadMentions === b.unreadMentions && a.unreadReactionsCount === b.unreadReactionsCount

export function unionInto(into: ChatMarks, from: ChatMarks) {
  for (const id of from.read) into.read.add(id)
  for (const [src, dst] of [
    [from.mentionSeen, into.mentionSeen],
    [from.reactionSeen, into.reactionSeen],
  ] as const) {
    for (const [id, keys] of src) {
      let s = dst.get(id)
      if (!s) dst.set(id, (s = new Set()))
      for (const k of keys) s.add(k)
    }
  }
}
