import { toB64, writeTextUpdate, type YTextField } from './ytext.ts'
import { keepWriterDoc, takeWriterDoc } from './ytext-writer-docs.ts'
import { offerWrittenDoc } from './ytext-written-docs.ts'

/**
 * textUpdate as the op carries it (base64), for a replica that folds its own op next. The doc
 * it is written in is kept, not built again: for this replica's fold when it is exactly that
 * fold (ytext-written-docs.ts, a text's first update), else for the next update of the same
 * text (ytext-writer-docs.ts). `text` names the record and path (keepWriterDoc).
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
