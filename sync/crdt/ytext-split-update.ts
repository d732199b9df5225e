import diff from 'fast-diff'
import type * as Y from 'yjs'
import { characterDiff, seedUpdate, toB64, writeTextUpdate, type YTextField } from './ytext.ts'
import { YTEXT_LIMITS } from './ytext-limits.ts'

/**
 * One local edit whose Yjs update would pass YTEXT_LIMITS.maxUpdateBytes (a paste of more than
 * about 21,000 characters), written as several updates of the same writer, each under the
 * bound, that fold in order to the same text. The bound stays what every peer judges a single
 * update by (checkUpdate), so a peer never has to accept an unbounded update; the local body
 * limit (1 MB) bounds the edit as a whole.
 *
 * The steps: first every deletion of the character diff (an update that deletes carries only
 * ids, however long the range), then the insertions in slices of at most `budget` UTF-16
 * units. A unit is at most 3 UTF-8 bytes (a surrogate pair is 4 bytes for 2 units), and a
 * slice never ends inside a surrogate pair, so a slice's update stays under the bound.
 *
 * Answers 'set' when no split can stay under the bound: a text with no Yjs state yet must
 * carry its seed (the whole current text as one content-addressed item, ytext.ts) in its first
 * update, and a seed past the bound cannot be cut. The caller then writes the text as a plain
 * set, which merges by stamp order instead of by character.
 */
const HEADROOM = 4096
/** Below this, a seed leaves too little room for a slice to be worth an update. */
const MIN_SLICE = 1024

export function splitTextUpdates(field: YTextField | undefined, current: string, next: string, client: number): string[] | 'set' {
  const seed = field ? undefined : seedUpdate(current)
  const max = YTEXT_LIMITS.maxUpdateBytes
  const firstBudget = Math.floor((max - HEADROOM - (seed?.length ?? 0)) / 3)
  if (seed && firstBudget < MIN_SLICE) return 'set'
  const steps = stepsOf(current, next, firstBudget, Math.floor((max - HEADROOM) / 3))
  const out: string[] = []
  let doc: Y.Doc | undefined
  let cur = current
  try {
    for (const mid of steps) {
      const written = writeTextUpdate(field, cur, mid, client, doc)
      if (!written) continue
      doc = written.doc
      cur = mid
      if (written.update.length > max) return 'set'
      out.push(toB64(written.update))
    }
  } finally {
    doc?.destroy()
  }
  return out
}

/**
 * The texts after each step (the last is `next`). Kept text is there from the first step on,
 * deleted text never; an inserted slice from its own step on. With deletions, step 1 is the
 * deletions alone and slices start at step 2; without, step 1 carries the first slice, within
 * `firstBudget` (the room the seed leaves).
 */
function stepsOf(current: string, next: string, firstBudget: number, budget: number): string[] {
  const d = characterDiff(current, next)
  const pieces: Array<{ s: string; step: number }> = []
  const deletes = d.some(([k]) => k === diff.DELETE)
  let step = deletes ? 2 : 1
  let room = deletes ? budget : firstBudget
  let last = 1
  for (const [kind, s] of d) {
    if (kind === diff.EQUAL) pieces.push({ s, step: 1 })
    if (kind !== diff.INSERT) continue
    let at = 0
    while (at < s.length) {
      if (room <= 0) {
        step++
        room = budget
      }
      let end = Math.min(s.length, at + room)
      // Never split a surrogate pair between two updates.
      if (end < s.length && end > at + 1 && isHighSurrogate(s.charCodeAt(end - 1))) end--
      pieces.push({ s: s.slice(at, end), step })
      room -= end - at
      at = end
      last = step
    }
  }
  const out: string[] = []
  for (let k = 1; k <= last; k++)
    out.push(
      pieces
        .filter((p) => p.step <= k)
        .map((p) => p.s)
        .join(''),
    )
  return out
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff
