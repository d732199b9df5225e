import { toB64, writeTextUpdate, type YTextField } from './ytext.ts'
import { keepWriterDoc, takeWriterDoc } from './ytext-writer-docs.ts'
import { offerWrittenDoc } from './ytext-written-docs.ts'
import { YTEXT_LIMITS } from './ytext-limits.ts'
import { splitTextUpdates } from './ytext-split-update.ts'

/**
 * textUpdate as the op carries it (base64), for a replica that folds its own op next. The doc
 * it is written in is kept, not built again: for this replica's fold when it is exactly that
 * fold (ytext-written-docs.ts, a text's first update), else for the next update of the same
 * text (ytext-writer-docs.ts). `text` names the writer, record and path (keepWriterDoc).
 */
export function ownTextUpdate(text: string, field: YTextField | undefined, current: string, next: string, client: number): string | undefined {
  const warm = field ? takeWriterDoc(text, field) : undefined
  const written = writeTextUpdate(field, current, next, client, warm)
  if (!written) return undefined
  const update = toB64(written.update)
  if (written.exactFold) offerWrittenDoc(update, written.doc)
  else if (field && written.wellFormed) keepWriterDoc(text, written.doc, field, update)
  else written.doc.destroy()
  return update
}

/**
 * ownTextUpdate for an edit of any size: one update when it fits the peers' bound on one
 * update, else several to write in order, or 'set' when it cannot be split
 * (ytext-split-update.ts). A doc kept for an update that is not written is dropped at the next
 * take, since its update was never folded (ytext-writer-docs.ts).
 */
export function ownTextUpdates(text: string, field: YTextField | undefined, current: string, next: string, client: number): string[] | 'set' {
  const update = ownTextUpdate(text, field, current, next, client)
  if (update === undefined) return []
  // base64: 4 chars for every 3 bytes, the last group padded.
  if ((update.length / 4) * 3 - padding(update) <= YTEXT_LIMITS.maxUpdateBytes) return [update]
  return splitTextUpdates(field, current, next, client)
}

const padding = (b64: string) => (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0)
