import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { decodeMessage, encodeMessage, JOIN_STATUS_CODES, MSG, ProtocolError, type Message } from '../../sync/protocol/messages.ts'
import { JOIN_LIMITS, PROTOCOL_VERSION } from '../../sync/protocol/limits.ts'
import { contentId } from '../../sync/crypto/hash.ts'
import type { JoinStatus } from '../../sync/protocol/sharing-network.ts'

const id = (n: number) => contentId(new Uint8Array([n]))

const codeOf = (b: Uint8Array) => {
  try {
    decodeMessage(b)
    return 'ok'
  } catch (err) {
    expect(err).toBeInstanceOf(ProtocolError)
    return (err as ProtocolError).code
  }
}

/** The 32 raw bytes of an id, as the wire carries them (taken from an encoded message). */
function rawId(n: number): Uint8Array {
  const w = encodeMessage({ type: 'done', spaceId: id(n), req: 0 })
  // [1, 5, bytes(32), 0]: array head, two small uints, a 2-byte bytes head.
  return w.subarray(5, 37)
}

describe('join messages', () => {
  const samples: Message[] = [
    { type: 'join', spaceId: id(3), req: 0xffffffff, change: new Uint8Array(300).fill(7) },
    { type: 'join', spaceId: id(3), req: 0, change: new Uint8Array(JOIN_LIMITS.maxJoinChangeBytes).fill(1) },
    ...(Object.keys(JOIN_STATUS_CODES) as JoinStatus[]).map((status): Message => ({ type: 'joined', spaceId: id(4), req: 9, status })),
  ]

  it('round-trip byte for byte', () => {
    for (const m of samples) {
      const b = encodeMessage(m)
      expect(decodeMessage(b)).toEqual(m)
      expect(encodeMessage(decodeMessage(b))).toEqual(b)
    }
  })

  it('the wire form is [1, type, space, req, field]', () => {
    const b = encodeMessage({ type: 'joined', spaceId: id(4), req: 9, status: 'accepted' })
    expect(b).toEqual(encodeCanonical([PROTOCOL_VERSION, MSG.joined, rawId(4), 9, 2]))
    expect(b.length).toBeLessThanOrEqual(42)
  })

  it('match the test vectors of docs/protocol.md section 11', () => {
    const S = '67WKXSxm4oc149PvQjdXLacKFZpK5DyYdqBwpiVydJbb'
    const hex = (m: Message) => Buffer.from(encodeMessage(m)).toString('hex')
    expect(hex({ type: 'join', spaceId: S, req: 0x01020304, change: new Uint8Array([0xab, 0xcd]) })).toBe(
      '85010758204bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a1a0102030442abcd',
    )
    expect(hex({ type: 'joined', spaceId: S, req: 0x01020304, status: 'accepted' })).toBe('85010858204bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a1a0102030402')
    expect(hex({ type: 'error', spaceId: S, req: 0x01020304, code: 'unknown_space' })).toBe(
      '85010658204bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a1a0102030402',
    )
  })

  it('refuses every malformed shape with a typed code', () => {
    const space = rawId(3)
    const j = (...rest: unknown[]) => encodeCanonical([PROTOCOL_VERSION, MSG.join, ...rest])
    const d = (...rest: unknown[]) => encodeCanonical([PROTOCOL_VERSION, MSG.joined, ...rest])
    expect(codeOf(j(space, 1, new Uint8Array(10)))).toBe('ok')
    expect(codeOf(j(space, 1, new Uint8Array(0)))).toBe('malformed') // empty change
    expect(codeOf(j(space, 1, new Uint8Array(JOIN_LIMITS.maxJoinChangeBytes + 1)))).toBe('over_limit')
    expect(codeOf(j(space, 1, 'text'))).toBe('malformed')
    expect(codeOf(j(space, 1))).toBe('malformed') // arity
    expect(codeOf(j(space, 1, new Uint8Array(1), 0))).toBe('malformed')
    expect(codeOf(j(space.subarray(1), 1, new Uint8Array(1)))).toBe('malformed')
    expect(codeOf(j(space, 2 ** 32, new Uint8Array(1)))).toBe('malformed')
    expect(codeOf(j(space, -1, new Uint8Array(1)))).toBe('malformed')
    expect(codeOf(d(space, 1, 1))).toBe('ok')
    for (const bad of [0, 5, 2 ** 32, 'accepted', new Uint8Array(1)]) expect(codeOf(d(space, 1, bad))).toBe('malformed')
    expect(codeOf(d(space, 1))).toBe('malformed')
  })

  it('random bytes and random arrays after a join or joined header never throw anything but a ProtocolError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (tail) => {
        codeOf(new Uint8Array([...encodeCanonical([PROTOCOL_VERSION, MSG.join]).subarray(0, 3), ...tail]))
      }),
      { numRuns: 500 },
    )
    const field = fc.oneof(fc.integer(), fc.string(), fc.uint8Array({ maxLength: 40 }), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }))
    fc.assert(
      fc.property(fc.constantFrom(MSG.join, MSG.joined), fc.array(field, { maxLength: 5 }), (type, rest) => {
        const r = codeOf(encodeCanonical([PROTOCOL_VERSION, type, ...rest]))
        expect(['ok', 'malformed', 'over_limit']).toContain(r)
      }),
      { numRuns: 1000 },
    )
  })
})
