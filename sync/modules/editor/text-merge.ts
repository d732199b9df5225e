import diff from 'fast-diff'

/**
 * A three-way merge of one block's text, for clients that send a whole text typed against a
 * text they last saw (`PATCH /blocks/:blockId` with `textBase`). Without it, the service would
 * diff its current text against what the client sent and remove whatever another member typed
 * since the client last looked. Here the client's edits are the diff from `base` to `mine`,
 * and they are replayed onto `theirs` (the text now) at the places they were made: a character
 * deleted on either side is gone, and both sides' insertions at one place are kept, theirs
 * first. The result then goes out as a text delta like any other edit (text-deltas.ts).
 */
export function mergeText(base: string, mine: string, theirs: string): string {
  if (mine === base) return theirs
  if (theirs === base) return mine
  const m = editsFrom(base, mine)
  const t = editsFrom(base, theirs)
  let out = ''
  for (let gap = 0; gap <= base.length; gap++) {
    out += t.inserted[gap] + m.inserted[gap]
    if (gap < base.length && !t.deleted[gap] && !m.deleted[gap]) out += base[gap]
  }
  return out
}

interface Edits {
  /** Per character of the base: removed. */
  deleted: Uint8Array
  /** Per gap of the base (before character i, and after the last): text inserted there. */
  inserted: string[]
}

function editsFrom(base: string, other: string): Edits {
  const deleted = new Uint8Array(base.length)
  const inserted = new Array<string>(base.length + 1).fill('')
  let at = 0
  for (const [op, text] of diff(base, other)) {
    if (op === diff.EQUAL) at += text.length
    else if (op === diff.DELETE) {
      deleted.fill(1, at, at + text.length)
      at += text.length
    } else inserted[at] += text
  }
  return { deleted, inserted }
}
