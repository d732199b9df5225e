import * as Y from 'yjs'
import { fromB64, type YTextField } from './ytext.ts'

/**
 * The doc a writer last wrote a text's update in, kept for its next update of that text: a
 * block being typed in is written again and again, and without it each update starts by
 * decoding the block's whole Yjs state into a new doc (7 ms for a 10,000-character text typed
 * at random places by two writers).
 *
 * A kept doc holds the field's state as it was written on, plus the update. It is used only
 * while the text's field is the very instance it was written on, and only once that folded the
 * update: the doc then folds, in the field's order, every other update the field folded since
 * (YTextField.foldedLog: another writer's edits arriving between two of ours, the common case
 * when two people type in one paragraph). Both then hold the same set of updates, so the same
 * items and deletions (Yjs's merge does not depend on the order), and the writer's doc writes
 * what a doc decoded from the field's state would (test/ytext/writer-docs.test.ts compares the
 * stored records of both). Anything else (the update not folded, more folded since than the
 * field remembers, the record reloaded from storage, the write refused) drops it.
 */

/** Texts whose writer doc is kept, least recently written first out. */
export const WRITER_DOCS_MAX = 16

interface Kept {
  doc: Y.Doc
  base: YTextField
  baseFolded: number
  update: string
}

const kept = new Map<string, Kept>()
let reused = 0
let caughtUp = 0

/** `text`: the writer and the record and path the doc belongs to, unique in the process (salt, space, object, dataset, record, path). */
export function keepWriterDoc(text: string, doc: Y.Doc, base: YTextField, update: string) {
  const had = kept.get(text)
  if (had && had.doc !== doc) had.doc.destroy()
  kept.delete(text)
  kept.set(text, { doc, base, baseFolded: base.folded, update })
  if (kept.size > WRITER_DOCS_MAX) {
    const [oldest, old] = kept.entries().next().value!
    kept.delete(oldest)
    old.doc.destroy()
  }
}

/** The kept doc of `text` if it holds `field`'s state (removed from here either way). */
export function takeWriterDoc(text: string, field: YTextField): Y.Doc | undefined {
  const k = kept.get(text)
  if (!k) return undefined
  kept.delete(text)
  const since = k.base === field ? field.lastFoldedUpdates(field.folded - k.baseFolded) : undefined
  const own = since ? since.indexOf(k.update) : -1
  if (since && own >= 0) {
    for (let i = 0; i < since.length; i++) if (i !== own) Y.applyUpdate(k.doc, fromB64(since[i]))
    reused++
    if (since.length > 1) caughtUp++
    return k.doc
  }
  k.doc.destroy()
  return undefined
}

/** Drops every kept doc (tests compare writes with and without them). */
export function clearWriterDocs() {
  for (const k of kept.values()) k.doc.destroy()
  kept.clear()
}

export function writerDocCount(): number {
  return kept.size
}

/** Writes that found their text's doc kept (tests check their comparisons covered such writes). */
export function writerDocsReused(): number {
  return reused
}

/** Of those, the ones whose doc first folded updates of other writers (tests check they were covered). */
export function writerDocsCaughtUp(): number {
  return caughtUp
}
