import { sha256 } from '@noble/hashes/sha2.js'
import { applyToRecord, type MergeOp, type RecordState } from '../../sync/crdt/record.ts'
import type { Stamped } from '../../bench/ytext-workload.ts'
import { getPath } from '../../sync/crdt/path.ts'
import { clientIdFor, textUpdate, toB64, YTextField, ytextDigestPart } from '../../sync/crdt/ytext.ts'
import { encodeStoredRecord, decodeStoredRecord, MemoryNumbering } from '../../sync/replica/record-codec.ts'

export type { Stamped }

/** A replica of one record at the merge layer: folds stamped ops as apply-batch does. */
export class FoldReplica {
  state: RecordState | undefined
  lamport = 0
  seq = 0
  constructor(
    readonly author: string,
    readonly salt: string,
  ) {}

  apply(s: Stamped) {
    this.lamport = Math.max(this.lamport, s.info.l)
    this.state = applyToRecord(this.state, s.info, s.op, []).state
  }

  text(path = 'text'): string | undefined {
    const v = getPath(this.state?.value, path)
    return typeof v === 'string' ? v : undefined
  }

  /** A local text write: the update from the current string to `next`, applied here, returned for the others. */
  writeText(next: string, path = 'text'): Stamped | undefined {
    const field = this.state?.yt?.[path] ? YTextField.from(this.state.yt[path]) : undefined
    const u = textUpdate(field, this.text(path) ?? '', next, clientIdFor(this.author, this.salt))
    if (!u) return undefined
    return this.local({ k: 'ytext', p: path, u: toB64(u), salt: this.salt })
  }

  local(op: MergeOp): Stamped {
    const s: Stamped = { info: { l: this.lamport + 1, c: `${this.author}-${this.salt}-${String(++this.seq).padStart(6, '0')}`, i: 0, a: this.author, t: 0 }, op }
    this.apply(s)
    return s
  }

  /** The record through the storage codec and back (what a peer holds after a restart). */
  reloaded(): RecordState {
    const numbering = new MemoryNumbering()
    return decodeStoredRecord(encodeStoredRecord({ ...this.state!, v: 0 }, numbering), numbering)
  }

  /** Digest of what every peer must agree on: the value and each text path's state bytes. */
  digest(): string {
    const st = this.state!
    // The text merge keeps up incrementally is the text Yjs reads from the state bytes.
    for (const p of Object.keys(st.yt ?? {})) {
      // The stored form (the state, and the updates folded since) reads back as the same text.
      const j = YTextField.from(st.yt![p]).toJSON()
      if (YTextField.from(j).value() !== YTextField.from(st.yt![p]).value()) throw new Error(`text of ${p} drifted from its Yjs state`)
    }
    // What stateDigest compares: the stamp and the state encoded now (a stored form depends on
    // when the state was last encoded, which differs between peers).
    const yt = st.yt ? ytextDigestPart(st.yt) : []
    return Buffer.from(sha256(new TextEncoder().encode(JSON.stringify([st.value, yt])))).toString('hex')
  }
}
