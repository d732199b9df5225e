import { describe, expect, it } from 'vitest'
import { toHex } from '../../sync/core/encoding.ts'
import { contentId } from '../../sync/crypto/hash.ts'
import { encodeMessage } from '../../sync/protocol/messages.ts'
import { elementEntry, headsHashOf, positionOf, rangeFp, RangeIndex, rootFpBytes } from '../../sync/protocol/range-index.ts'

// The worked example of docs/protocol.md ("Test vectors"): if this test changes, so must the doc.
describe('protocol test vectors', () => {
  const space = contentId(new Uint8Array([1]))
  const tree = contentId(new Uint8Array([2]))
  const head = contentId(new Uint8Array([3]))
  const ix = new RangeIndex()
  ix.set(space, headsHashOf([space]))
  ix.set(tree, headsHashOf([head]))

  it('ids, positions and hashes', () => {
    expect([space, tree, head]).toEqual([
      '67WKXSxm4oc149PvQjdXLacKFZpK5DyYdqBwpiVydJbb',
      'FnqbqF7YJekTNEMkZJMcujSouSfd4CzTacotg2LmSqeV',
      'ZSx1e5zpVu3SY2cwo1vqUrSe34UaGkRdinnbv99nmSc',
    ])
    expect([positionOf(space), positionOf(tree)].map((p) => p.toString(16))).toEqual(['3fc59c94', 'c459322f'])
    expect(toHex(headsHashOf([head]))).toBe('b986680d656767c6064f62601a60fde17220c017027b95a3282b71dd762701d0')
    expect(ix.elements().map((e) => [e.lo.toString(16), e.hi.toString(16)])).toEqual([
      ['c504ed73', '77b1160b'],
      ['ee02ae08', 'bba35984'],
    ])
  })

  it('fingerprints, salted forms and the in-sync exchange', () => {
    const fp = ix.fingerprint()
    expect(toHex(rootFpBytes(fp))).toBe('2b06437bcc124f8f')
    const salted = new Uint8Array(4)
    rangeFp(0x01020304, fp, salted, 0)
    expect(toHex(salted)).toBe('eac0ca58')
    const entry = new Uint8Array(8)
    elementEntry(0x01020304, ix.elements()[0], entry, 0)
    expect(toHex(entry)).toBe('3fc59c94cfaef246')
    expect(toHex(encodeMessage({ type: 'sync', spaceId: space, req: 0x01020304, fp: rootFpBytes(fp), count: 2 }))).toBe(
      '86010358204bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a1a01020304482b06437bcc124f8f02',
    )
    expect(toHex(encodeMessage({ type: 'done', spaceId: space, req: 0x01020304 }))).toBe('84010558204bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a1a01020304')
  })
})
