import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'

/**
 * The seed update (ytext.ts, seedUpdate) written byte by byte in Yjs's update format (v1), and
 * the join of a seed with the update that edits on top of it. A block's first text edit carries
 * both in one update; building the seed in a Y.Doc of its own, encoding it, decoding it into the
 * writer's doc and merging the two updates with Y.mergeUpdates was the largest part of what text
 * deltas added to a markdown PUT (bench/ytext.ts, `putVsPlainSet`). test/ytext/seed-bytes.test.ts
 * checks these bytes against Yjs's own for many strings.
 */

/** Yjs's content ref of a string item (ContentString), as the low bits of an item's info byte. */
const CONTENT_STRING = 4
/** Parent info of an item without origins: its parent is a root type, named by its key. */
const PARENT_IS_ROOT_KEY = 1

/** One client's one item: a whole string at clock 0, no origins, in root text `root`; no deletions. */
export function seedBytes(client: number, root: string, text: string): Uint8Array {
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, 1) // clients
  encoding.writeVarUint(e, 1) // structs of the client
  encoding.writeVarUint(e, client)
  encoding.writeVarUint(e, 0) // clock of the first struct
  encoding.writeUint8(e, CONTENT_STRING)
  encoding.writeVarUint(e, PARENT_IS_ROOT_KEY)
  encoding.writeVarString(e, root)
  encoding.writeVarString(e, text)
  encoding.writeVarUint(e, 0) // delete set: no clients
  return encoding.toUint8Array(e)
}

/**
 * One update holding a seed (seedBytes) and `edit`, an update of other clients than the seed's.
 * The update format is the count of clients, each client's structs, then the delete set; a seed
 * has no deletions, so the joined update is the seed's one client put before `edit`'s clients
 * with the count raised by one. Yjs reads clients in any order (it integrates them sorted by id).
 */
export function joinSeed(seed: Uint8Array, edit: Uint8Array): Uint8Array {
  const d = decoding.createDecoder(edit)
  const clients = decoding.readVarUint(d)
  const rest = edit.subarray(d.pos)
  const seedClientBlock = seed.subarray(1, seed.length - 1)
  const e = encoding.createEncoder()
  encoding.writeVarUint(e, clients + 1)
  encoding.writeUint8Array(e, seedClientBlock)
  encoding.writeUint8Array(e, rest)
  return encoding.toUint8Array(e)
}
