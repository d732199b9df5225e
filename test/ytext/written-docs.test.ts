import diff from 'fast-diff'
import fc from 'fast-check'
import * as Y from 'yjs'
import { afterEach, describe, expect, it } from 'vitest'
import { getPath } from '../../sync/crdt/path.ts'
import { applyToRecord, type MergeOp, type RecordState, type StampInfo } from '../../sync/crdt/record.ts'
import { clientIdFor, fromB64, newDoc, writeTextUpdate, YTEXT_ROOT, YTextField } from '../../sync/crdt/ytext.ts'
import { clearWrittenDocs, ownTextUpdate, WRITTEN_DOCS_MAX, writtenDocCount } from '../../sync/crdt/ytext-written-docs.ts'
import { encodeStoredRecord } from '../../sync/replica/record-codec.ts'

/**
 * A writer's own fold takes the doc its update was written in (sync/crdt/ytext-written-docs.ts)
 * instead of building one. What it stores must not depend on that: byte for byte what a replica
 * that never keeps a doc stores, and what a peer folding the same ops stores.
 */

const coldFold = (update: Uint8Array) => {
  const d = newDoc()
  Y.applyUpdate(d, update)
  const out = { text: d.getText(YTEXT_ROOT).toString(), state: Y.encodeStateAsUpdate(d) }
  d.destroy()
  return out
}

/** Strings with emoji (surrogate pairs) and now and then a lone surrogate. */
const textArb = fc.array(fc.oneof({ weight: 8, arbitrary: fc.string({ maxLength: 4, unit: 'grapheme' }) }, { weight: 2, arbitrary: fc.constantFrom('😀', '😁', 'é', '\n') }, { weight: 1, arbitrary: fc.constantFrom('\uD83D', '\uDE00') }), { maxLength: 12 }).map((xs) => xs.join(''))

/**
 * fast-diff recurses without end on some pairs with lone surrogates ("😀" to "😁\uDE00"), in
 * textUpdate as before these docs were kept; such pairs are left out here.
 */
function diffable(a: string, b: string): boolean {
  try {
    diff(a, b)
    return true
  } catch (err) {
    if (err instanceof RangeError) return false
    throw err
  }
}

/** A replica of some records at the merge layer, writing as withTextDeltas does (ownTextUpdate). */
class Writer {
  records = new Map<string, RecordState>()
  seq = 0
  taken = 0
  constructor(private readonly keepsDocs: boolean) {}

  text(id: string): string {
    const v = getPath(this.records.get(id)?.value, 'text')
    return typeof v === 'string' ? v : ''
  }

  /** The ops of one change: a first `set` of a record, a plain set of its text, or a text write. */
  ops(edits: Array<{ id: string; next: string; plain: boolean }>): Array<{ id: string; op: MergeOp }> {
    return edits.flatMap(({ id, next, plain }) => {
      const st = this.records.get(id)
      if (!st) return [{ id, op: { k: 'set', p: '', v: { text: next } } as MergeOp }]
      if (plain || !diffable(this.text(id), next)) return [{ id, op: { k: 'set', p: 'text', v: next } as MergeOp }]
      const yt = st.yt?.text ? YTextField.from(st.yt.text) : undefined
      const u = ownTextUpdate(yt, this.text(id), next, clientIdFor('alice', 'a1'))
      return u ? [{ id, op: { k: 'ytext', p: 'text', u, salt: 'a1' } as MergeOp }] : []
    })
  }

  fold(change: Array<{ id: string; op: MergeOp }>) {
    this.seq++
    change.forEach(({ id, op }, i) => {
      if (!this.keepsDocs) clearWrittenDocs()
      const before = writtenDocCount()
      const info: StampInfo = { l: this.seq, c: `change-${String(this.seq).padStart(6, '0')}`, i, a: 'alice', t: 0 }
      this.records.set(id, applyToRecord(this.records.get(id), info, op, []).state)
      if (writtenDocCount() < before) this.taken++
    })
  }

  stored(): string[] {
    return [...this.records.keys()].sort().map((id) => new TextDecoder().decode(encodeStoredRecord({ ...this.records.get(id)!, v: 0 })))
  }
}

afterEach(() => clearWrittenDocs())

describe('docs kept from writing to folding', () => {
  it('a doc kept for the fold is the cold fold of its update, byte for byte', () => {
    fc.assert(
      fc.property(textArb, textArb, (current, next) => {
        const w = diffable(current, next) ? writeTextUpdate(undefined, current, next, clientIdFor('alice', 'a1')) : undefined
        if (!w) return
        const cold = coldFold(w.update)
        if (w.exactFold) {
          expect(Y.encodeStateAsUpdate(w.doc)).toEqual(cold.state)
          expect(w.doc.getText(YTEXT_ROOT).toString()).toBe(cold.text)
        }
        w.doc.destroy()
      }),
      { numRuns: 2000 },
    )
  })

  it('a lone surrogate is not kept: the writer would hold another text than every peer', () => {
    const w = writeTextUpdate(undefined, 'ab', 'a\uD83Db', clientIdFor('alice', 'a1'))!
    expect(w.doc.getText(YTEXT_ROOT).toString()).toBe('a\uD83Db')
    expect(coldFold(w.update).text).toBe('a\uFFFDb')
    expect(w.exactFold).toBe(false)
    w.doc.destroy()
  })

  it('a replica keeping docs stores every record as one that never keeps them, and as a peer folding its ops', () => {
    const editArb = fc.record({ id: fc.constantFrom('b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7'), next: textArb, plain: fc.boolean() }, { requiredKeys: ['id', 'next'] }).map((e) => ({ ...e, plain: e.plain === true && e.next.length % 5 === 0 }))
    let taken = 0
    fc.assert(
      fc.property(fc.array(fc.uniqueArray(editArb, { selector: (e) => e.id, minLength: 1, maxLength: WRITTEN_DOCS_MAX + 2 }), { minLength: 1, maxLength: 25 }), (changes) => {
        clearWrittenDocs()
        const warm = new Writer(true)
        const cold = new Writer(false)
        const peer = new Writer(false)
        for (const edits of changes) {
          const ops = warm.ops(edits)
          expect(cold.ops(edits)).toEqual(ops)
          clearWrittenDocs()
          // The warm writer writes again so that its docs are the ones kept for its fold.
          expect(warm.ops(edits)).toEqual(ops)
          warm.fold(ops)
          cold.fold(ops)
          peer.fold(ops)
          expect(warm.stored()).toEqual(cold.stored())
          expect(peer.stored()).toEqual(warm.stored())
        }
        taken += warm.taken
      }),
      { numRuns: 300 },
    )
    // The docs were taken, not just offered: the comparison covered them.
    expect(taken).toBeGreaterThan(300)
  })

  it('a doc written over Yjs state is not kept: folding the update into nothing would give another state', () => {
    const client = clientIdFor('alice', 'a1')
    const first = writeTextUpdate(undefined, 'one', 'one two', client)!
    const field = YTextField.holding({ l: 1, c: 'c1', i: 0 }, first.doc)
    expect(ownTextUpdate(field, 'one two', 'one two three', client)).toBeDefined()
    expect(writtenDocCount()).toBe(0)
  })

  it('keeps at most WRITTEN_DOCS_MAX docs', () => {
    for (let i = 0; i < 50; i++) ownTextUpdate(undefined, `block ${i}`, `block ${i} edited`, clientIdFor('alice', 'a1'))
    expect(writtenDocCount()).toBe(WRITTEN_DOCS_MAX)
  })

  it('a fold where the text has state already absorbs the update and leaves the kept doc alone', () => {
    const client = clientIdFor('alice', 'a1')
    const u = ownTextUpdate(undefined, 'one', 'one two', client)!
    const info: StampInfo = { l: 1, c: 'c1', i: 0, a: 'alice', t: 0 }
    // A record whose text already has Yjs state (another writer's edit of it).
    const other = writeTextUpdate(undefined, 'one', 'one!', clientIdFor('bob', 'b1'))!
    other.doc.destroy()
    let st = applyToRecord(undefined, info, { k: 'set', p: '', v: { text: 'one' } }, []).state
    st = applyToRecord(st, { ...info, l: 2, c: 'c2', a: 'bob' }, { k: 'ytext', p: 'text', u: Buffer.from(other.update).toString('base64'), salt: 'b1' }, []).state
    st = applyToRecord(st, { ...info, l: 3, c: 'c3' }, { k: 'ytext', p: 'text', u, salt: 'a1' }, []).state
    expect(writtenDocCount()).toBe(1)
    expect(getPath(st.value, 'text')).toBe(coldFold(Y.mergeUpdates([other.update, fromB64(u)])).text)
  })
})
