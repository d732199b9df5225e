import { getPath } from '../sync/crdt/path.ts'
import { clientIdFor, textUpdate, toB64, YTextField } from '../sync/crdt/ytext.ts'
import type { SpaceReplica } from '../sync/replica/space-replica.ts'
import type { Prng } from './prng.ts'

/**
 * Concurrent block text edits in the simulator's workload (the `text` kind of workload.ts):
 * few block records, so peers edit the same paragraph at once, offline and online. An edit
 * inserts a few characters, deletes a short range, or both, at a random place, and goes out as
 * the editor's does: a `ytext` op with the Yjs update of the character diff (sync/crdt/ytext.ts),
 * read, diffed and written in one step of the replica's queue. Now and then a plain set
 * replaces the whole text (the stamp-order rule against updates).
 *
 * The checker (textsDiffer) compares every block's text on peers that hold the same heads;
 * stateDigest, which the runner compares as well, covers the Yjs state bytes.
 */
export const TEXT_DATASET = 'blocks'
const BLOCKS = ['p0', 'p1']
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz '

export async function textEdit(rep: SpaceReplica, obj: string, r: Prng, salt: string): Promise<string> {
  const id = r.pick(BLOCKS)
  const replace = r.chance(0.08)
  const res = await rep.writeResolved(obj, async (read) => {
    const rec = await read(TEXT_DATASET, id)
    const live = rec && !rec.deleted ? rec : undefined
    const cur = getPath(live?.value, 'text')
    const text = typeof cur === 'string' ? cur : ''
    if (replace || !live) return { ops: [{ op: 'set', ds: TEXT_DATASET, id, path: replace ? 'text' : '', value: replace ? word(r) : { text: word(r) } }] }
    const at = r.int(text.length + 1)
    const del = r.chance(0.3) ? Math.min(text.length - at, 1 + r.int(3)) : 0
    const ins = del > 0 && r.chance(0.5) ? '' : word(r)
    const next = text.slice(0, at) + ins + text.slice(at + del)
    const field = live.yt && Object.prototype.hasOwnProperty.call(live.yt, 'text') ? YTextField.from(live.yt.text) : undefined
    const u = textUpdate(field, text, next, clientIdFor(rep.me, salt))
    return { ops: u ? [{ op: 'ytext', ds: TEXT_DATASET, id, path: 'text', update: toB64(u), salt }] : [] }
  })
  return `${replace ? 'textSet' : 'text'} ${res.changeId}`
}

const word = (r: Prng) => Array.from({ length: 1 + r.int(4) }, () => ALPHABET[r.int(ALPHABET.length)]).join('')

/** Blocks whose text differs between two replicas (same heads expected): `[tree/id, a, b]`. */
export async function textsDiffer(a: SpaceReplica, b: SpaceReplica): Promise<Array<[string, string, string]>> {
  const out: Array<[string, string, string]> = []
  for (const t of a.treeIds()) {
    for (const id of BLOCKS) {
      const [x, y] = await Promise.all([a.getRecord(t, TEXT_DATASET, id), b.getRecord(t, TEXT_DATASET, id)])
      const tx = JSON.stringify(getPath(x?.value, 'text') ?? null)
      const ty = JSON.stringify(getPath(y?.value, 'text') ?? null)
      if (tx !== ty) out.push([`${t.slice(0, 8)}/${id}`, tx, ty])
    }
  }
  return out
}
