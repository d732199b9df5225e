import type { Json, Op } from '../../../crdt/ops.ts'
import { isObject } from '../../../crdt/path.ts'
import { addTo, emptyMarks, type ChatMarks, type MarkAdds } from './compute.ts'

/**
 * How read marks are stored: in the account's tech space (synced across the account's own
 * devices only, never to other members), dataset `chatRead/<spaceId>/<chatObjectId>`, one
 * record per message that has marks, with set-only leaves:
 *
 * - `r: true`: the message was read;
 * - `m.<key>: true`: the mention version `<key>` was seen;
 * - `x.<key>: true`: the reaction leaf `<key>` was seen.
 *
 * Nothing is ever unset and every leaf's only value is `true`, so merging what two devices
 * wrote, in any order, is the union of their marks: read state moves forward only, and a
 * device reading offline loses nothing when it syncs. (A "last seen" value per message would
 * be last-writer-wins, and a device that saw less but wrote later would move it back.)
 */
export const CHAT_READ_PREFIX = 'chatRead'

export const marksDataset = (spaceId: string, chatId: string) => `${CHAT_READ_PREFIX}/${spaceId}/${chatId}`

/** The chat a marks dataset of this space belongs to, or undefined. */
export function chatOfDataset(spaceId: string, ds: string): string | undefined {
  const prefix = `${CHAT_READ_PREFIX}/${spaceId}/`
  return ds.startsWith(prefix) ? ds.slice(prefix.length) : undefined
}

/** Leaves a change carries at most (the change limit is 10,000 ops; stay well inside it). */
export const MAX_MARK_OPS_PER_CHANGE = 2_000

/** Folds one marks record into `marks` (foreign shapes are ignored: only `true` leaves count). */
export function foldRecord(marks: ChatMarks, msgId: string, value: Json | undefined) {
  if (!isObject(value)) return
  if (value.r === true) marks.read.add(msgId)
  for (const [leaf, map] of [
    ['m', marks.mentionSeen],
    ['x', marks.reactionSeen],
  ] as const) {
    const keys = value[leaf]
    if (!isObject(keys)) continue
    for (const [k, v] of Object.entries(keys)) if (v === true) addTo(map, msgId, k)
  }
}

export function marksOf(records: Iterable<{ id: string; value: Json | undefined; deleted?: boolean }>): ChatMarks {
  const marks = emptyMarks()
  for (const r of records) if (!r.deleted) foldRecord(marks, r.id, r.value)
  return marks
}

/** The set ops of some adds, in changes of at most MAX_MARK_OPS_PER_CHANGE ops. */
export function markOps(ds: string, adds: MarkAdds): Op[][] {
  const ops: Op[] = []
  for (const id of adds.read) ops.push({ op: 'set', ds, id, path: 'r', value: true })
  for (const [id, k] of adds.mention) ops.push({ op: 'set', ds, id, path: `m.${k}`, value: true })
  for (const [id, k] of adds.reaction) ops.push({ op: 'set', ds, id, path: `x.${k}`, value: true })
  const out: Op[][] = []
  for (let i = 0; i < ops.length; i += MAX_MARK_OPS_PER_CHANGE) out.push(ops.slice(i, i + MAX_MARK_OPS_PER_CHANGE))
  return out
}
