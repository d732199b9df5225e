import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { PENDING_SHARE, toB64, YTextField } from '../../sync/crdt/ytext.ts'
import { encodeStoredRecord, MemoryNumbering } from '../../sync/replica/record-codec.ts'
import { FoldReplica } from './fold-helpers.ts'
import { interleavedEdits } from '../../bench/ytext-workload.ts'

/**
 * Compaction: a block's text state is one merged Yjs update plus the updates folded since it was
 * last encoded, bounded by PENDING_SHARE of it, so after 10,000 single-character edits from two
 * interleaving replicas its size is that of the Yjs state itself, not of the edits.
 */
describe('ytext state size', () => {
  it('after 10,000 single-character edits the stored state stays within 1.5x of a bare Y.Doc', () => {
    const { ops, updates } = interleavedEdits(10_000)
    const r = new FoldReplica('carol', 'c')
    const bare = new Y.Doc()
    for (let k = 0; k < ops.length; k++) {
      r.apply(ops[k])
      Y.applyUpdate(bare, updates[k])
      // A replica writes the record to storage after each batch: sometimes mid-stream.
      if (k % 1000 === 999) r.state = r.reloaded()
    }
    expect(r.text()).toBe(bare.getText('t').toString())
    const state = YTextField.from(r.state!.yt!.text).state()
    const bareBytes = Y.encodeStateAsUpdate(bare).length
    const stored = encodeStoredRecord({ ...r.state!, v: 0 }, new MemoryNumbering()).length
    const sumOfUpdates = updates.reduce((n, u) => n + u.length, 0)
    expect(state.length).toBeLessThanOrEqual(bareBytes * 1.5)
    // The stored record (JSON: base64 state beside the plain text) is below the edits' own sum.
    expect(stored).toBeLessThan(sumOfUpdates)
    console.log(JSON.stringify({ edits: 10_000, stateBytes: state.length, bareBytes, storedRecordBytes: stored, textChars: r.text()!.length, sumOfUpdates }))
  })

  it('a stored field carries the updates folded since its state was encoded, bounded, and reads back the same state', () => {
    const { ops, updates } = interleavedEdits(3000)
    const r = new FoldReplica('carol', 'c')
    let withPending = 0
    let encodes = 0
    let lastU: string | undefined
    for (let k = 0; k < ops.length; k++) {
      r.apply(ops[k])
      // A replica stores the record after every change (one change per edit while two people type).
      const stored = YTextField.from(r.state!.yt!.text).toJSON()
      if (stored.u !== lastU) encodes++
      lastU = stored.u
      const pending = stored.p ?? []
      if (pending.length > 0) withPending++
      expect(pending.reduce((n, x) => n + x.length, 0)).toBeLessThanOrEqual(stored.u.length * PENDING_SHARE)
      if (k % 97 === 0) {
        // Decoded from the stored form: the same text, and the same state bytes as the live field.
        const back = YTextField.from(JSON.parse(JSON.stringify(stored)) as typeof stored)
        expect(back.value()).toBe(r.text())
        expect(toB64(back.state())).toBe(toB64(YTextField.from(r.state!.yt!.text).state()))
      }
    }
    const bare = new Y.Doc()
    for (const u of updates) Y.applyUpdate(bare, u)
    expect(r.text()).toBe(bare.getText('t').toString())
    // Most stores append to the state rather than encode it anew.
    expect(withPending).toBeGreaterThan(ops.length / 2)
    expect(encodes).toBeLessThan(ops.length / 10)
  })
})
