import { afterEach, describe, expect, it } from 'vitest'
import { applyToRecord, type RecordState, type StampInfo } from '../../sync/crdt/record.ts'
import { clientIdFor, textUpdate, toB64, YTextField } from '../../sync/crdt/ytext.ts'
import { ownTextUpdate } from '../../sync/crdt/ytext-own-update.ts'
import { clearWriterDocs, WRITER_DOCS_MAX, writerDocCount, writerDocsReused } from '../../sync/crdt/ytext-writer-docs.ts'
import { clearWrittenDocs } from '../../sync/crdt/ytext-written-docs.ts'

/**
 * The doc a writer keeps for its next update of a text (sync/crdt/ytext-writer-docs.ts) is used
 * only on the very field it was written on, once that folded the update and nothing else.
 * (own-update.test.ts compares whole writers keeping docs and keeping none.)
 */

const alice = clientIdFor('alice', 'a1')
const info = (l: number, a = 'alice'): StampInfo => ({ l, c: `c${l}`, i: 0, a, t: 0 })
const field = (st: RecordState) => YTextField.from(st.yt!.text)
const fold = (st: RecordState | undefined, l: number, u: string, a = 'alice', salt = 'a1') => applyToRecord(st, info(l, a), { k: 'ytext', p: 'text', u, salt }, []).state
const text = (st: RecordState) => (st.value as { text: string }).text

afterEach(() => {
  clearWriterDocs()
  clearWrittenDocs()
})

describe('a writer doc kept for the next update', () => {
  it('is used for the next update of the text it was written on', () => {
    let st = applyToRecord(undefined, info(1), { k: 'set', p: '', v: { text: 'one' } }, []).state
    st = fold(st, 2, ownTextUpdate('b1', undefined, 'one', 'one two', alice)!)
    st = fold(st, 3, ownTextUpdate('b1', field(st), text(st), 'one two three', alice)!)
    const before = writerDocsReused()
    const u = ownTextUpdate('b1', field(st), text(st), 'one, two, three', alice)!
    expect(writerDocsReused()).toBe(before + 1)
    expect(u).toBe(toB64(textUpdate(field(st), text(st), 'one, two, three', alice)!))
  })

  it('is not used by another replica writing the same record, even one that folded the same update', () => {
    // Two replicas of one record in one process (two devices under test): b has also folded bob's edit.
    const plainOf = (st: RecordState) => JSON.parse(JSON.stringify(st)) as RecordState
    let a = applyToRecord(undefined, info(1), { k: 'set', p: '', v: { text: 'one' } }, []).state
    a = fold(a, 2, ownTextUpdate('b1', undefined, 'one', 'one two', alice)!)
    let b = plainOf(a)
    b = fold(b, 3, toB64(textUpdate(field(b), text(b), 'one two!', clientIdFor('bob', 'b1'))!), 'bob', 'b1')
    a = plainOf(a)
    b = plainOf(b)
    // Both fields are fresh instances, each folded once after a's write: the same update.
    const u = ownTextUpdate('b1', field(a), text(a), 'one two three', alice)!
    fold(a, 4, u)
    b = fold(b, 4, u)
    const reused = writerDocsReused()
    const next = ownTextUpdate('b1', field(b), text(b), text(b) + ' four', alice)
    expect(writerDocsReused()).toBe(reused)
    expect(next).toBe(toB64(textUpdate(field(b), text(b), text(b) + ' four', alice)!))
  })

  it('keeps at most WRITER_DOCS_MAX docs', () => {
    for (let i = 0; i < 40; i++) {
      let st = applyToRecord(undefined, info(1), { k: 'set', p: '', v: { text: `block ${i}` } }, []).state
      st = fold(st, 2, ownTextUpdate(`b${i}`, undefined, `block ${i}`, `block ${i}!`, alice)!)
      ownTextUpdate(`b${i}`, field(st), text(st), `block ${i}!!`, alice)
    }
    expect(writerDocCount()).toBe(WRITER_DOCS_MAX)
  })
})
