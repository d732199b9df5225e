import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { decodeMessage, encodeMessage, ProtocolError, type Message } from '../../sync/protocol/messages.ts'
import { PROTOCOL_VERSION, SYNC_LIMITS } from '../../sync/protocol/limits.ts'
import { contentId } from '../../sync/crypto/hash.ts'

const id = (n: number) => contentId(new Uint8Array([n]))
const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill)

const samples: Message[] = [
  { type: 'hello', identity: id(1), nonce: bytes(16) },
  { type: 'auth', identity: id(2), signature: bytes(64, 9) },
  { type: 'sync', spaceId: id(3), req: 0xffffffff, fp: bytes(8), count: 100_000 },
  {
    type: 'step',
    spaceId: id(3),
    req: 7,
    hop: 3,
    ranges: [
      { kind: 'fps', prefix: 5, len: 4, bits: 2, fps: bytes(16) },
      { kind: 'elems', prefix: 1, len: 1, elems: new Uint8Array([0x80, 0, 0, 1, 9, 9, 9, 9]) },
      { kind: 'elems', prefix: 0, len: 0, elems: new Uint8Array(0) },
    ],
    heads: [
      { treeId: id(4), heads: [id(5), id(6)], have: [id(7)] },
      { treeId: id(8), heads: [], have: [] },
    ],
    wants: [0, 0xffffffff],
    changes: [bytes(300), new Uint8Array(0)],
  },
  { type: 'done', spaceId: id(3), req: 1 },
  { type: 'error', spaceId: id(3), req: 1, code: 'not_member' },
]

const codeOf = (b: Uint8Array) => {
  try {
    decodeMessage(b)
    return 'ok'
  } catch (err) {
    expect(err).toBeInstanceOf(ProtocolError)
    return (err as ProtocolError).code
  }
}

describe('head-sync messages', () => {
  it('round-trip every message type, byte for byte', () => {
    for (const m of samples) {
      const b = encodeMessage(m)
      expect(decodeMessage(b)).toEqual(m)
      expect(encodeMessage(decodeMessage(b))).toEqual(b)
    }
  })

  it('an in-sync exchange fits in 64 bytes each way', () => {
    expect(encodeMessage({ type: 'sync', spaceId: id(3), req: 0xffffffff, fp: bytes(8), count: 0xffffffff }).length).toBeLessThanOrEqual(64)
    expect(encodeMessage({ type: 'done', spaceId: id(3), req: 0xffffffff }).length).toBeLessThanOrEqual(64)
  })

  it('refuses oversized, malformed, foreign-version and unknown-type input with typed codes', () => {
    expect(codeOf(new Uint8Array(SYNC_LIMITS.maxMessageBytes + 1))).toBe('oversized')
    expect(codeOf(new Uint8Array([0xff, 0x00]))).toBe('malformed')
    expect(codeOf(encodeCanonical({ v: 1 }))).toBe('malformed')
    expect(codeOf(encodeCanonical([PROTOCOL_VERSION + 1, 3]))).toBe('bad_version')
    expect(codeOf(encodeCanonical([PROTOCOL_VERSION, 99]))).toBe('unknown_type')
    // A field of the wrong width, an element outside its range, a prefix wider than its length.
    expect(codeOf(encodeCanonical([PROTOCOL_VERSION, 1, bytes(31), bytes(16)]))).toBe('malformed')
    const step = (ranges: unknown[]) => encodeCanonical([PROTOCOL_VERSION, 4, bytes(32), 1, 1, ranges, [], new Uint8Array(0), []])
    expect(codeOf(step([[1, 0, 1, new Uint8Array([0x80, 0, 0, 0, 1, 1, 1, 1])]]))).toBe('malformed')
    expect(codeOf(step([[0, 4, 2, 1, bytes(8)]]))).toBe('malformed')
    expect(codeOf(step([[0, 0, 31, 2, bytes(16)]]))).toBe('malformed')
    // Over a count limit.
    expect(codeOf(encodeCanonical([PROTOCOL_VERSION, 4, bytes(32), 1, 1, [], [], new Uint8Array(4 * (SYNC_LIMITS.maxWants + 1)), []]))).toBe('over_limit')
    // Not canonical: an integer in a longer form than needed.
    const sync = encodeMessage({ type: 'done', spaceId: id(3), req: 1 })
    const long = new Uint8Array([...sync.slice(0, sync.length - 1), 0x18, 0x01])
    expect(codeOf(long)).toBe('malformed')
  })

  it('never throws anything but a ProtocolError, whatever the bytes (fuzz)', () => {
    const valid = samples.map(encodeMessage)
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (b) => {
        codeOf(b)
      }),
      { numRuns: 2000 },
    )
    // Mutations of valid messages: flip, cut, extend.
    fc.assert(
      fc.property(fc.nat(valid.length - 1), fc.nat(), fc.nat(255), fc.constantFrom('flip', 'cut', 'extend'), (i, pos, v, how) => {
        const b = valid[i].slice()
        const p = pos % b.length
        const m = how === 'flip' ? ((b[p] ^= v || 1), b) : how === 'cut' ? b.slice(0, p) : new Uint8Array([...b, v])
        codeOf(m)
      }),
      { numRuns: 3000 },
    )
  })
})
