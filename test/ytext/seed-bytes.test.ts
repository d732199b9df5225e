import fc from 'fast-check'
import * as Y from 'yjs'
import { describe, expect, it } from 'vitest'
import { checkUpdate, clientIdFor, newDoc, seedClientFor, YTEXT_ROOT } from '../../sync/crdt/ytext.ts'
import { joinSeed, seedBytes } from '../../sync/crdt/ytext-seed-bytes.ts'

/** The seed as Yjs itself writes it: the whole string inserted under the seed's client id. */
function yjsSeed(s: string): Uint8Array {
  const d = newDoc()
  d.clientID = seedClientFor(s)
  d.getText(YTEXT_ROOT).insert(0, s)
  const u = Y.encodeStateAsUpdate(d)
  d.destroy()
  return u
}

const stateAfter = (...updates: Uint8Array[]) => {
  const d = newDoc()
  for (const u of updates) Y.applyUpdate(d, u)
  const out = { text: d.getText(YTEXT_ROOT).toString(), state: Y.encodeStateAsUpdate(d) }
  d.destroy()
  return out
}

describe('seed bytes written without Yjs', () => {
  it('are the bytes Yjs writes for the seed, for any string (lengths past one and two varint bytes too)', () => {
    const long = ['x'.repeat(127), 'y'.repeat(128), 'é'.repeat(9000), '😀'.repeat(5000)]
    for (const s of long) expect(seedBytes(seedClientFor(s), YTEXT_ROOT, s)).toEqual(yjsSeed(s))
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 300, unit: 'grapheme' }), (s) => {
        expect(seedBytes(seedClientFor(s), YTEXT_ROOT, s)).toEqual(yjsSeed(s))
      }),
      { numRuns: 300 },
    )
  })

  it('joined with an edit: the same state as Y.mergeUpdates of the two, and a valid update of the writer', () => {
    const client = clientIdFor('alice', 'a1')
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 60, unit: 'grapheme' }), fc.nat(60), fc.nat(5), fc.string({ maxLength: 8 }), (s, at, del, ins) => {
        const seed = yjsSeed(s)
        const d = newDoc()
        Y.applyUpdate(d, seed)
        d.clientID = client
        let edit: Uint8Array | undefined
        d.on('update', (u: Uint8Array) => (edit = u))
        const t = d.getText(YTEXT_ROOT)
        const i = Math.min(at, t.length)
        d.transact(() => {
          t.delete(i, Math.min(del, t.length - i))
          t.insert(i, ins)
        })
        d.destroy()
        if (!edit) return
        const joined = joinSeed(seedBytes(seedClientFor(s), YTEXT_ROOT, s), edit)
        expect(stateAfter(joined)).toEqual(stateAfter(Y.mergeUpdates([seed, edit])))
        expect(checkUpdate(joined, client)).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})
