import { afterEach, describe, expect, it } from 'vitest'
import { applyToRecord, type RecordState, type StampInfo } from '../../sync/crdt/record.ts'
import { clientIdFor, FOLDED_LOG, textUpdate, toB64, YTextField } from '../../sync/crdt/ytext.ts'
import { ownTextUpdate } from '../../sync/crdt/ytext-own-update.ts'
import { clearWriterDocs, WRITER_DOCS_MAX, writerDocCount, writerDocsCaughtUp, writerDocsReused } from '../../sync/crdt/ytext-writer-docs.ts'
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

  it("catches up on another writer's updates folded since, and writes what a cold doc writes", () => {
    // Two people typing in one paragraph: between two of alice's updates, bob's arrive.
    const bob = clientIdFor('bob', 'b1')
    let st = applyToRecord(undefined, info(1), { k: 'set', p: '', v: { text: 'seed' } }, []).state
    st = fold(st, 2, ownTextUpdate('b1', undefined, 'seed', 'seed!', alice)!)
    let l = 3
    let seed = 7
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n
    const caught = writerDocsCaughtUp()
    for (let k = 0; k < 60; k++) {
      for (let j = rnd(3); j > 0; j--) {
        const t = text(st)
        const at = rnd(t.length + 1)
        st = fold(st, l++, toB64(textUpdate(field(st), t, t.slice(0, at) + 'xyz'[j % 3] + t.slice(at), bob)!), 'bob', 'b1')
      }
      const t = text(st)
      const at = rnd(t.length + 1)
      const next = k % 5 === 4 && t.length > 2 ? t.slice(0, at) + t.slice(at + 1) : t.slice(0, at) + String.fromCharCode(97 + (k % 26)) + t.slice(at)
      const cold = toB64(textUpdate(field(st), t, next, alice)!)
      const u = ownTextUpdate('b1', field(st), t, next, alice)!
      expect(u).toBe(cold)
      st = fold(st, l++, u)
      expect(text(st)).toBe(next)
    }
    expect(writerDocsCaughtUp()).toBeGreaterThan(caught + 20)
  })

  it('is dropped when more was folded since than the field remembers', () => {
    const bob = clientIdFor('bob', 'b1')
    let st = applyToRecord(undefined, info(1), { k: 'set', p: '', v: { text: 'seed' } }, []).state
    st = fold(st, 2, ownTextUpdate('b1', undefined, 'seed', 'seed!', alice)!)
    st = fold(st, 3, ownTextUpdate('b1', field(st), text(st), 'seed!!', alice)!)
    for (let k = 0; k < FOLDED_LOG; k++) st = fold(st, 4 + k, toB64(textUpdate(field(st), text(st), text(st) + 'b', bob)!), 'bob', 'b1')
    const reused = writerDocsReused()
    const u = ownTextUpdate('b1', field(st), text(st), text(st) + 'a', alice)!
    expect(writerDocsReused()).toBe(reused)
    expect(u).toBe(toB64(textUpdate(field(st), text(st), text(st) + 'a', alice)!))
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
