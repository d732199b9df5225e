import * as Y from 'yjs'
import { clientIdFor, toB64, YTEXT_ROOT } from '../sync/crdt/ytext.ts'
import type { MergeOp, StampInfo } from '../sync/crdt/record.ts'

/** One op as a change carries it: its stamp and the merge op. */
export interface Stamped {
  info: StampInfo
  op: MergeOp
}

/**
 * `n` single-character edits typed alternately by two writers who see each other's edits at
 * once (the interleaving that grows a Yjs state most), as the ytext ops their changes carry.
 * Shared by bench/ytext.ts and test/ytext/size.test.ts. Each writer's Y.Doc runs under the client id merge expects of it (clientIdFor).
 */
export function interleavedEdits(n: number): { ops: Stamped[]; updates: Uint8Array[] } {
  const writers = [
    { author: 'alice', salt: 'a', doc: new Y.Doc() },
    { author: 'bob', salt: 'b', doc: new Y.Doc() },
  ]
  for (const w of writers) w.doc.clientID = clientIdFor(w.author, w.salt)
  const ops: Stamped[] = []
  const updates: Uint8Array[] = []
  for (let k = 0; k < n; k++) {
    const w = writers[k % 2]
    const other = writers[(k + 1) % 2]
    const text = w.doc.getText(YTEXT_ROOT)
    const len = text.length
    let u: Uint8Array | undefined
    const off = (x: Uint8Array) => (u = x)
    w.doc.once('update', off)
    // Mostly typing at the end, sometimes in the middle, sometimes a backspace.
    if (k % 11 === 0 && len > 0) text.delete(len - 1, 1)
    else text.insert(k % 7 === 0 ? Math.floor(len / 2) : len, String.fromCharCode(97 + (k % 26)))
    Y.applyUpdate(other.doc, u!)
    updates.push(u!)
    ops.push({ info: { l: k + 1, c: `${w.author}-${String(k).padStart(6, '0')}`, i: 0, a: w.author, t: 0 }, op: { k: 'ytext', p: 'text', u: toB64(u!), salt: w.salt } })
  }
  for (const w of writers) w.doc.destroy()
  return { ops, updates }
}
