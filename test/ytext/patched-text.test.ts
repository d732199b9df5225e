import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { clientIdFor, YTEXT_ROOT, YTextField } from '../../sync/crdt/ytext.ts'

/**
 * The string a text field keeps up edit by edit (patchedText: from the end, from the anchor the
 * last edit in the middle left, or a whole walk) is always the text Yjs itself reads, on texts
 * long enough that edits in the middle are found from the anchor, not the end.
 */
describe('a text field keeps its string through long sequences of edits anywhere', () => {
  const step = fc.record({
    who: fc.nat(1),
    // Where: near the previous edit, at the end, or anywhere.
    where: fc.oneof(fc.constant('near' as const), fc.constant('end' as const), fc.constant('any' as const)),
    offset: fc.integer({ min: -5, max: 5 }),
    pos: fc.nat(10_000),
    del: fc.nat(3),
    ins: fc.string({ minLength: 0, maxLength: 3 }),
  })
  it('matches Y.Text#toString after every update, two writers interleaved', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 50, maxLength: 400 }), fc.nat(1000), (steps, seedLen) => {
        const writers = [0, 1].map((i) => {
          const doc = new Y.Doc()
          doc.clientID = clientIdFor(`w${i}`, 's')
          return doc
        })
        const field = new YTextField({ l: 0, c: '', i: 0 }, undefined)
        // A long start, so edits in the middle sit far from both ends.
        const start = 'x'.repeat(100 + (seedLen % 200))
        const seed = new Y.Doc()
        seed.clientID = clientIdFor('seed', 's')
        seed.getText(YTEXT_ROOT).insert(0, start)
        const s0 = Y.encodeStateAsUpdate(seed)
        // What the field has absorbed so far, as Yjs reads it.
        const mirror = new Y.Doc()
        for (const d of [...writers, mirror]) Y.applyUpdate(d, s0)
        field.absorb(s0, { l: 1, c: 'a', i: 0 })
        expect(field.value()).toBe(start)
        let last = 0
        let k = 2
        for (const st of steps) {
          const w = writers[st.who]
          const text = w.getText(YTEXT_ROOT)
          const len = text.length
          let at = st.where === 'end' ? len : st.where === 'near' ? last + st.offset : st.pos % (len + 1)
          at = Math.max(0, Math.min(len, at))
          const updates: Uint8Array[] = []
          const onUpdate = (u: Uint8Array) => updates.push(u)
          w.on('update', onUpdate)
          const del = Math.min(st.del, len - at)
          if (del > 0) text.delete(at, del)
          if (st.ins) text.insert(at, st.ins)
          w.off('update', onUpdate)
          last = at + st.ins.length
          for (const u of updates) {
            for (const other of writers) if (other !== w) Y.applyUpdate(other, u)
            field.absorb(u, { l: k, c: `c${k}`, i: 0 })
            Y.applyUpdate(mirror, u)
            k++
            expect(field.value()).toBe(mirror.getText(YTEXT_ROOT).toString())
          }
        }
      }),
      { numRuns: 60 },
    )
  })
})

describe('the anchor moves with edits made left of it', () => {
  it('an insert left of the anchor near the end, then edits far from the end next to it', () => {
    const a = new Y.Doc()
    const b = new Y.Doc()
    a.clientID = clientIdFor('a', 's')
    b.clientID = clientIdFor('b', 's')
    const mirror = new Y.Doc()
    const field = new YTextField({ l: 0, c: '', i: 0 }, undefined)
    let k = 1
    const edit = (doc: Y.Doc, fn: (t: Y.Text) => void) => {
      const ups: Uint8Array[] = []
      const on = (u: Uint8Array) => ups.push(u)
      doc.on('update', on)
      fn(doc.getText(YTEXT_ROOT))
      doc.off('update', on)
      for (const u of ups) {
        for (const d of [a, b, mirror]) if (d !== doc) Y.applyUpdate(d, u)
        field.absorb(u, { l: k, c: `c${k}`, i: 0 })
        k++
        field.value()
        expect(field.value()).toBe(mirror.getText(YTEXT_ROOT).toString())
      }
    }
    // 80 one-character items (the writers alternate, so none merge).
    for (let i = 0; i < 80; i++) edit(i % 2 ? a : b, (t) => t.insert(t.length, String.fromCharCode(65 + (i % 26))))
    // An insert with more than 32 items right of it becomes the anchor.
    edit(a, (t) => t.insert(20, 'M'))
    // Cut the end back so the anchor is among the last 32 items.
    edit(b, (t) => t.delete(30, t.length - 30))
    // An insert just left of the anchor, found from the end: the anchor must move right.
    edit(a, (t) => t.insert(19, 'L'))
    // Grow the end again, then edit right next to the anchor (found from it).
    for (let i = 0; i < 60; i++) edit(i % 2 ? a : b, (t) => t.insert(t.length, String.fromCharCode(97 + (i % 26))))
    edit(b, (t) => t.insert(t.toString().indexOf('M') + 1, 'N'))
    edit(a, (t) => t.insert(t.toString().indexOf('M'), 'K'))
  })
})
