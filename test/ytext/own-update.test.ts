import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { getPath } from '../../sync/crdt/path.ts'
import { applyToRecord, type MergeOp, type RecordState, type StampInfo } from '../../sync/crdt/record.ts'
import { clientIdFor, textUpdate, toB64, YTextField } from '../../sync/crdt/ytext.ts'
import { ownTextUpdate } from '../../sync/crdt/ytext-own-update.ts'
import { clearWriterDocs, writerDocsReused } from '../../sync/crdt/ytext-writer-docs.ts'
import { clearWrittenDocs, WRITTEN_DOCS_MAX, writtenDocCount } from '../../sync/crdt/ytext-written-docs.ts'
import { encodeStoredRecord, MemoryNumbering } from '../../sync/replica/record-codec.ts'
import { diffable, textArb } from './text-arbs.ts'

/**
 * A writer keeps the docs its text updates were written in (sync/crdt/ytext-own-update.ts): for
 * its own fold of a text's first update, and for its next update of the same text. What it
 * writes and stores must not depend on them: the same ops, and every record byte for byte what
 * a writer that never keeps a doc stores, and what a peer folding the same ops stores.
 */

const clearKeptDocs = () => {
  clearWrittenDocs()
  clearWriterDocs()
}

interface Edit {
  id: string
  next: string
  plain: boolean
  /** Written by another replica (never keeping a doc) that had seen everything so far. */
  remote: boolean
  /** Written here but never folded (a write refused after its ops were made). */
  lost: boolean
  /** Not written: this replica's last op of the record comes back (a peer syncs it again). */
  echo: boolean
}

type AuthoredOp = { id: string; a: string; op: MergeOp; lost?: boolean; info?: StampInfo }

/** Records at the merge layer, written as withTextDeltas writes them and folded as apply-batch folds them. */
class Writer {
  records = new Map<string, RecordState>()
  lastOwn = new Map<string, AuthoredOp>()
  seq = 0
  handedToFold = 0
  constructor(private readonly keepsDocs: boolean) {}

  text(id: string): string {
    const v = getPath(this.records.get(id)?.value, 'text')
    return typeof v === 'string' ? v : ''
  }

  /** The ops of one change: a record's first `set`, a plain set of its text, or a text update. */
  ops(edits: Edit[]): AuthoredOp[] {
    return edits.flatMap(({ id, next, plain, remote, lost, echo }): AuthoredOp[] => {
      const st = this.records.get(id)
      const own = this.lastOwn.get(id)
      if (echo && own) return [own]
      const a = remote ? 'bob' : 'alice'
      if (!st) return [{ id, a, op: { k: 'set', p: '', v: { text: next } } }]
      if (plain || !diffable(this.text(id), next)) return [{ id, a, op: { k: 'set', p: 'text', v: next } }]
      const yt = st.yt?.text ? YTextField.from(st.yt.text) : undefined
      if (remote) {
        const u = textUpdate(yt, this.text(id), next, clientIdFor('bob', 'b1'))
        return u ? [{ id, a, op: { k: 'ytext', p: 'text', u: toB64(u), salt: 'b1' } }] : []
      }
      if (!this.keepsDocs) clearKeptDocs()
      const u = ownTextUpdate(id, yt, this.text(id), next, clientIdFor('alice', 'a1'))
      return u ? [{ id, a, op: { k: 'ytext', p: 'text', u, salt: 'a1' }, lost }] : []
    })
  }

  fold(change: AuthoredOp[]) {
    this.seq++
    change.forEach((authored, i) => {
      const { id, a, op, lost } = authored
      if (lost) return
      if (!this.keepsDocs) clearKeptDocs()
      const before = writtenDocCount()
      const info: StampInfo = authored.info ?? { l: this.seq, c: `change-${String(this.seq).padStart(6, '0')}`, i, a, t: 0 }
      if (a === 'alice' && !authored.info) this.lastOwn.set(id, { id, a, op, info })
      this.records.set(id, applyToRecord(this.records.get(id), info, op, []).state)
      if (writtenDocCount() < before) this.handedToFold++
    })
  }

  stored(): string[] {
    // The stored bytes, and the change ids their numbers stand for.
    return [...this.records.keys()].sort().map((id) => {
      const numbering = new MemoryNumbering()
      return new TextDecoder().decode(encodeStoredRecord({ ...this.records.get(id)!, v: 0 }, numbering)) + JSON.stringify(numbering.ids)
    })
  }
}

/** Each change's ops and every record after it. */
function run(writer: Writer, changes: Edit[][]) {
  clearKeptDocs()
  return changes.map((edits) => {
    const ops = writer.ops(edits)
    writer.fold(ops)
    return { ops, stored: writer.stored() }
  })
}

describe('docs a writer keeps', () => {
  it('change nothing written or stored: same ops and same record bytes as a writer keeping none, and as a peer', () => {
    // Few records, edited again and again, several per change (a markdown PUT of several blocks).
    const editArb = fc
      .record({ id: fc.constantFrom('b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7'), next: textArb, kind: fc.nat(11) })
      .map(({ id, next, kind }) => ({ id, next, plain: kind === 0, remote: kind === 1, lost: kind === 2, echo: kind === 3 }))
    const reusedBefore = writerDocsReused()
    let handedToFold = 0
    fc.assert(
      fc.property(fc.array(fc.uniqueArray(editArb, { selector: (e) => e.id, minLength: 1, maxLength: WRITTEN_DOCS_MAX + 2 }), { minLength: 1, maxLength: 30 }), (changes) => {
        const keeping = new Writer(true)
        const warm = run(keeping, changes)
        const cold = run(new Writer(false), changes)
        expect(warm).toEqual(cold)
        const peer = new Writer(false)
        for (const step of warm) {
          peer.fold(step.ops)
          expect(peer.stored()).toEqual(step.stored)
        }
        handedToFold += keeping.handedToFold
      }),
      { numRuns: 300 },
    )
    // The comparison covered both kinds of kept docs, not only writes that found none.
    expect(handedToFold).toBeGreaterThan(300)
    expect(writerDocsReused() - reusedBefore).toBeGreaterThan(500)
  })
})
