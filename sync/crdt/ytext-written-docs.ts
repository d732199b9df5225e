import type * as Y from 'yjs'

/**
 * Docs a writer built for the first update of a text that had no Yjs state (ytext.ts,
 * writeTextUpdate): such a doc holds exactly what folding that update into nothing gives, so
 * the fold of the writer's own change takes it instead of building a second doc and decoding
 * the update into it (a markdown PUT's first edit of a block then builds one doc, not three).
 *
 * Keyed by the update (base64, as the op carries it): whichever record folds those bytes into
 * an empty text gets the same state, so a doc can only be taken where it is exact. The fold
 * still checks the update first (checkUpdate), the same on every peer. A doc is taken once; a
 * write that never folds (refused, or a remote update reached the text first) leaves its doc
 * to be pushed out by later ones.
 */

/** Docs kept at most: a writer's update is folded right after it is written, so a few suffice. */
export const WRITTEN_DOCS_MAX = 4

const docs = new Map<string, Y.Doc>()

export function offerWrittenDoc(update: string, doc: Y.Doc) {
  const had = docs.get(update)
  if (had && had !== doc) had.destroy()
  docs.delete(update)
  docs.set(update, doc)
  if (docs.size > WRITTEN_DOCS_MAX) {
    const [oldest, old] = docs.entries().next().value!
    docs.delete(oldest)
    old.destroy()
  }
}

/** The doc written with `update`, removed from here (its taker owns it). */
export function takeWrittenDoc(update: string): Y.Doc | undefined {
  const doc = docs.get(update)
  if (doc) docs.delete(update)
  return doc
}

/** Drops every kept doc (tests compare folds with and without them). */
export function clearWrittenDocs() {
  for (const doc of docs.values()) doc.destroy()
  docs.clear()
}

export function writtenDocCount(): number {
  return docs.size
}
