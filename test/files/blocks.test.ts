import { describe, expect, it } from 'vitest'
import { nobleAead } from '../../sync/crypto/aead.ts'
import { filesSecret, isBlock, openBlock, sealBlock, sealBlockInto } from '../../sync/modules/files/blocks.ts'
import { nodeAead } from '../../node/crypto/node-provider.ts'
import { sha256 } from '../../sync/crypto/hash.ts'
import { chunks } from '../../sync/modules/files/chunker.ts'
import { parseRange } from '../../sync/modules/files/range.ts'
import { parseFileRecord } from '../../sync/modules/files/record.ts'
import { BLOCKS_WIRE, decodeBlocksMessage, encodeBlockFrameParts, encodeBlocksMessage, MalformedBlocks, type BlocksMessage } from '../../sync/protocol/blocks-wire.ts'
import { decodeCanonical, encodeCanonical } from '../../sync/core/encoding.ts'
import { FILES } from '../../sync/modules/files/limits.ts'

/* The pure parts of files (docs/files.md): block crypto, chunking, Range parsing, record checks, the wire codec. */

const bytes = (n: number, seed = 1) => new Uint8Array(n).map((_, i) => (i * 31 + seed) & 255)

describe('block crypto', () => {
  const s1 = filesSecret(bytes(32, 1))
  const s2 = filesSecret(bytes(32, 2))
  it('equal plaintext under one space secret gives one block; another space gives another', () => {
    const a = sealBlock(s1, bytes(1000), nobleAead)
    const b = sealBlock(s1, bytes(1000), nobleAead)
    const c = sealBlock(s2, bytes(1000), nobleAead)
    expect(b.id).toBe(a.id)
    expect(c.id).not.toBe(a.id)
    expect(a.bytes.length).toBe(1016)
  })
  it("sealing into given memory, the plaintext's own too, gives the same block (native and noble)", () => {
    for (const aead of [nodeAead, nobleAead]) {
      for (const n of [0, 1, 1000, 70_000]) {
        const want = sealBlock(s1, bytes(n), nobleAead)
        const slot = new Uint8Array(n + 64)
        slot.set(bytes(n))
        const got = sealBlockInto(s1, slot.subarray(0, n), aead, sha256, slot)
        expect(got.id).toBe(want.id)
        expect(got.key).toEqual(want.key)
        expect(Buffer.from(got.bytes).equals(Buffer.from(want.bytes))).toBe(true)
        expect(got.bytes.buffer).toBe(slot.buffer)
      }
    }
  })
  it('the address checks the ciphertext, the key opens it, a flipped bit fails both', () => {
    const a = sealBlock(s1, bytes(500), nobleAead)
    expect(isBlock(a.id, a.bytes)).toBe(true)
    expect(openBlock(a.key, a.bytes, nobleAead)).toEqual(bytes(500))
    const bad = a.bytes.slice()
    bad[3] ^= 1
    expect(isBlock(a.id, bad)).toBe(false)
    expect(() => openBlock(a.key, bad, nobleAead)).toThrow()
  })
})

describe('chunks', () => {
  const collect = async (pieces: Uint8Array[], size: number, max = 1 << 30) => {
    const out: Uint8Array[] = []
    for await (const c of chunks(
      (async function* () {
        yield* pieces
      })(),
      size,
      max,
    ))
      out.push(c.slice())
    return out
  }
  it('cuts any piece boundaries into fixed chunks, the last shorter', async () => {
    const all = bytes(1000)
    const out = await collect([all.subarray(0, 7), all.subarray(7, 300), all.subarray(300, 301), all.subarray(301)], 128)
    expect(out.map((c) => c.length)).toEqual([128, 128, 128, 128, 128, 128, 128, 104])
    expect(Buffer.concat(out)).toEqual(Buffer.from(all))
  })
  it('refuses past the limit with file.too_large', async () => {
    await expect(collect([bytes(100), bytes(100)], 64, 150)).rejects.toMatchObject({ code: 'file.too_large' })
  })
  it('with reuse, the same bytes through one buffer (each chunk read before the next is asked for)', async () => {
    const all = bytes(1000)
    const pieces = [all.subarray(0, 7), all.subarray(7, 300), all.subarray(300, 301), all.subarray(301)]
    const seen = new Set<ArrayBufferLike>()
    const out: Uint8Array[] = []
    for await (const c of chunks(
      (async function* () {
        yield* pieces
      })(),
      128,
      1 << 30,
      true,
    )) {
      seen.add(c.buffer)
      out.push(c.slice())
    }
    expect(out.map((c) => c.length)).toEqual([128, 128, 128, 128, 128, 128, 128, 104])
    expect(Buffer.concat(out)).toEqual(Buffer.from(all))
    // One chunk buffer, and the input's own buffer for a chunk that sits whole in one piece.
    expect(seen.size).toBeLessThanOrEqual(2)
  })
})

describe('parseRange', () => {
  it('single ranges, suffixes, open ends, clamping; invalid otherwise', () => {
    expect(parseRange(undefined, 10)).toBeUndefined()
    expect(parseRange('bytes=0-0', 10)).toEqual({ start: 0, end: 0 })
    expect(parseRange('bytes=2-', 10)).toEqual({ start: 2, end: 9 })
    expect(parseRange('bytes=-3', 10)).toEqual({ start: 7, end: 9 })
    expect(parseRange('bytes=-30', 10)).toEqual({ start: 0, end: 9 })
    expect(parseRange('bytes=5-100', 10)).toEqual({ start: 5, end: 9 })
    for (const h of ['bytes=10-', 'bytes=3-2', 'bytes=-0', 'bytes=a-b', 'bytes=0-1,3-4', 'chars=0-1', 'bytes=-', '']) expect(parseRange(h, 10), h).toBe('invalid')
    expect(parseRange('bytes=0-', 0)).toBe('invalid')
  })
})

describe('parseFileRecord refuses what a hostile member may write', () => {
  const good = {
    id: 'f',
    name: 'a',
    mime: 'a/b',
    size: 2048,
    creator: 'c',
    hash: 'h',
    blockSize: 1024,
    blocks: ['2', '3'],
    keys: ['4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi', '4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi'],
  }
  it('accepts a block list that covers the size exactly', () => {
    expect(parseFileRecord('o', good).blocks).toEqual(['2', '3'])
  })
  for (const [what, patch] of [
    ['too few blocks', { size: 4096 }],
    ['a key of the wrong length', { keys: ['2', '2'] }],
    ['a non-base58 address', { blocks: ['0OIl', '3'] }],
    ['a block size past the limit', { blockSize: 64 * 1024 * 1024 }],
    ['a negative size', { size: -1 }],
    ['inline bytes of another length', { inline: 'AAAA', size: 5 }],
  ] as const) {
    it(`refuses ${what}`, () => {
      expect(() => parseFileRecord('o', { ...good, ...patch } as any)).toThrow(expect.objectContaining({ code: 'file.not_available' }))
    })
  }
})

describe('blocks wire', () => {
  it('a frame holds the largest block files write', () => {
    expect(BLOCKS_WIRE.maxFrameBytes).toBeGreaterThanOrEqual(
      encodeBlocksMessage({ kind: 'block', reqId: 2 ** 40, id: '1'.repeat(BLOCKS_WIRE.maxBlockIdChars), bytes: new Uint8Array(FILES.blockSize + 16) }).length,
    )
  })
  it("a block's bytes are a view of the received frame, not a copy; other decodes still copy", () => {
    const frame = encodeBlocksMessage({ kind: 'block', reqId: 1, id: '2NEpo7TZRRrLZSi2U', bytes: bytes(5000) })
    const m = decodeBlocksMessage(frame) as Extract<BlocksMessage, { kind: 'block' }>
    expect(m.bytes.buffer).toBe(frame.buffer)
    expect(Object.getPrototypeOf(m.bytes)).toBe(Uint8Array.prototype)
    expect(m.bytes).toEqual(bytes(5000))
    const w = decodeCanonical<Uint8Array[]>(encodeCanonical([bytes(10)]))
    expect(w[0].buffer.byteLength).toBe(10)
  })
  it('a block frame sent as envelope and bytes is byte for byte the encoded message, at every length form', () => {
    for (const n of [0, 1, 23, 24, 255, 256, 65_535, 65_536, FILES.blockSize + 16]) {
      for (const reqId of [0, 23, 24, 70_000, 2 ** 40]) {
        const id = '2NEpo7TZRRrLZSi2U'
        const b = bytes(n, reqId & 255)
        const [envelope, body] = encodeBlockFrameParts(reqId, id, b)
        expect(body).toBe(b)
        const whole = Buffer.concat([envelope, body])
        expect(whole.equals(Buffer.from(encodeBlocksMessage({ kind: 'block', reqId, id, bytes: b }))), `${n} bytes, reqId ${reqId}`).toBe(true)
      }
    }
  })
  it('round-trips every message', () => {
    const msgs: BlocksMessage[] = [
      { kind: 'want', reqId: 1, spaceId: 's', ids: ['2', '3'] },
      { kind: 'block', reqId: 2, id: '2', bytes: bytes(10) },
      { kind: 'none', reqId: 3, ids: ['4'] },
      { kind: 'has', reqId: 4, spaceId: 's', ids: ['5'] },
      { kind: 'have', reqId: 5, all: true },
    ]
    for (const m of msgs) expect(decodeBlocksMessage(encodeBlocksMessage(m))).toEqual(m)
  })
  it('refuses other versions, kinds, shapes and bounds', () => {
    for (const w of [
      [2, 1, 1, 's', []],
      [1, 9, 1],
      [1, 1, -1, 's', []],
      [1, 1, 1, '', []],
      [1, 1, 1, 's', Array(BLOCKS_WIRE.wantMax + 1).fill('2')],
      [1, 1, 1, 's', ['not base58!']],
      [1, 2, 1, '2', 'text'],
      [1, 5, 1, 'yes'],
      { a: 1 },
    ])
      expect(() => decodeBlocksMessage(encodeCanonical(w)), JSON.stringify(w)).toThrow(MalformedBlocks)
    expect(() => decodeBlocksMessage(new Uint8Array([0xff, 0x00]))).toThrow(MalformedBlocks)
  })
})
