import fc from 'fast-check'
import * as Y from 'yjs'
import { afterEach, describe, expect, it } from 'vitest'
import { getPath } from '../../sync/crdt/path.ts'
import { applyToRecord, type StampInfo } from '../../sync/crdt/record.ts'
import { clientIdFor, fromB64, newDoc, writeTextUpdate, YTEXT_ROOT, YTextField } from '../../sync/crdt/ytext.ts'
import { ownTextUpdate } from '../../sync/crdt/ytext-own-update.ts'
import { clearWriterDocs } from '../../sync/crdt/ytext-writer-docs.ts'
import { clearWrittenDocs, WRITTEN_DOCS_MAX, writtenDocCount } from '../../sync/crdt/ytext-written-docs.ts'
import { diffable, textArb } from './text-arbs.ts'

/**
 * A writer's own fold of a text's first update takes the doc the update was written in
 * (sync/crdt/ytext-written-docs.ts): only where that doc is exactly the fold. (own-update.test.ts
 * compares whole writers keeping docs and keeping none.)
 */

const coldFold = (update: Uint8Array) => {
  const d = newDoc()
  Y.applyUpdate(d, update)
  const out = { text: d.getText(YTEXT_ROOT).toString(), state: Y.encodeStateAsUpdate(d) }
  d.destroy()
  return out
}

afterEach(() => {
  clearWrittenDocs()
  clearWriterDocs()
})

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

  it('a doc written over Yjs state is not kept: folding the update into nothing would give another state', () => {
    const client = clientIdFor('alice', 'a1')
    const first = writeTextUpdate(undefined, 'one', 'one two', client)!
    const field = YTextField.holding({ l: 1, c: 'c1', i: 0 }, first.doc)
    expect(ownTextUpdate('b1', field, 'one two', 'one two three', client)).toBeDefined()
    expect(writtenDocCount()).toBe(0)
  })

  it('keeps at most WRITTEN_DOCS_MAX docs', () => {
    for (let i = 0; i < 50; i++) ownTextUpdate(`b${i}`, undefined, `block ${i}`, `block ${i} edited`, clientIdFor('alice', 'a1'))
    expect(writtenDocCount()).toBe(WRITTEN_DOCS_MAX)
  })

  it('a fold where the text has state already absorbs the update and leaves the kept doc alone', () => {
    const client = clientIdFor('alice', 'a1')
    const u = ownTextUpdate('b1', undefined, 'one', 'one two', client)!
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
