import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { YTextField } from '../../sync/crdt/ytext.ts'
import { encodeStoredRecord, MemoryNumbering } from '../../sync/replica/record-codec.ts'
import { FoldReplica } from './fold-helpers.ts'
import { interleavedEdits } from '../../bench/ytext-workload.ts'

/**
 * Compaction: a block's text state is one merged Yjs update, never a log of updates, so after
 * 10,000 single-character edits from two interleaving replicas its size is that of the Yjs
 * state itself, not of the edits.
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
})
