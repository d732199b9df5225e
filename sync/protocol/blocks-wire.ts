import { decodeCanonical, encodeCanonical } from '../core/encoding.ts'
import { isBase58 } from '../core/ids.ts'

/**
 * The wire form of files' block exchange (`/svc/blocks/1.0.0`, docs/files.md "Block exchange"):
 * one CBOR array per frame, version first.
 *
 * ```
 * want  [1, 1, reqId, spaceId, [blockId...]]   ask for blocks (at most wantMax ids)
 * block [1, 2, reqId, blockId, bytes]          one requested block
 * none  [1, 3, reqId, [blockId...]]            requested blocks not served (absent, or the asker may not read the space: indistinguishable)
 * has   [1, 4, reqId, spaceId, [blockId...]]   does the peer store every one of these (at most hasMax ids)
 * have  [1, 5, reqId, bool]                    the answer to has (and to put)
 * put   [1, 6, reqId, spaceId, blockId, bytes] keep this block (to a hub, docs/hub.md "Files"): answered by have
 * ```
 *
 * Blocks are sealed (docs/files.md "Keys and addresses"), so the network and any peer that
 * relays them sees addresses, sizes and timing, never content. Pure functions: bytes in,
 * values out; anything malformed is a MalformedBlocks error.
 */
export const BLOCKS_WIRE_VERSION = 1

export const BLOCKS_WIRE = {
  protocol: '/svc/blocks/1.0.0',
  /** Ids per want: the most block bytes one request can make a peer send. */
  wantMax: 16,
  /** Ids per has (a whole 1 GiB file at 1 MiB blocks). */
  hasMax: 1024,
  maxSpaceIdChars: 128,
  maxBlockIdChars: 64,
  /** Largest frame: one full block (files' 1 MiB, FILES.blockSize), its 16-byte tag and the envelope (test/files/blocks.test.ts checks the two agree). */
  maxFrameBytes: 1024 * 1024 + 16 + 1024,
} as const

export type BlocksMessage =
  | { kind: 'want'; reqId: number; spaceId: string; ids: string[] }
  | { kind: 'block'; reqId: number; id: string; bytes: Uint8Array }
  | { kind: 'none'; reqId: number; ids: string[] }
  | { kind: 'has'; reqId: number; spaceId: string; ids: string[] }
  | { kind: 'have'; reqId: number; all: boolean }
  | { kind: 'put'; reqId: number; spaceId: string; id: string; bytes: Uint8Array }

const KIND = { want: 1, block: 2, none: 3, has: 4, have: 5, put: 6 } as const

export class MalformedBlocks extends Error {}

/** The head of a CBOR byte string of `n` bytes, in its minimal (canonical) form. */
function byteStringHead(n: number): Uint8Array {
  if (n < 24) return Uint8Array.of(0x40 | n)
  if (n < 0x100) return Uint8Array.of(0x58, n)
  if (n < 0x10000) return Uint8Array.of(0x59, n >> 8, n & 0xff)
  return Uint8Array.of(0x5a, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff)
}

/**
 * A block frame as two parts, the envelope up to the bytes' head and the block's bytes
 * themselves: their concatenation is exactly `encodeBlocksMessage` of the block (a CBOR array
 * is its head followed by its items' encodings), and the sender hands both to the stream
 * without copying the block into one buffer first.
 */
export function encodeBlockFrameParts(reqId: number, id: string, bytes: Uint8Array): [Uint8Array, Uint8Array] {
  const items = [BLOCKS_WIRE_VERSION, KIND.block, reqId, id].map((v) => encodeCanonical(v))
  const head = byteStringHead(bytes.length)
  const envelope = new Uint8Array(1 + items.reduce((n, b) => n + b.length, 0) + head.length)
  envelope[0] = 0x85 // an array of 5 items
  let at = 1
  for (const b of [...items, head]) {
    envelope.set(b, at)
    at += b.length
  }
  return [envelope, bytes]
}

export function encodeBlocksMessage(m: BlocksMessage): Uint8Array {
  switch (m.kind) {
    case 'want':
      return encodeCanonical([BLOCKS_WIRE_VERSION, KIND.want, m.reqId, m.spaceId, m.ids])
    case 'block':
      return encodeCanonical([BLOCKS_WIRE_VERSION, KIND.block, m.reqId, m.id, m.bytes])
    case 'none':
      return encodeCanonical([BLOCKS_WIRE_VERSION, KIND.none, m.reqId, m.ids])
    case 'has':
      return encodeCanonical([BLOCKS_WIRE_VERSION, KIND.has, m.reqId, m.spaceId, m.ids])
    case 'have':
      return encodeCanonical([BLOCKS_WIRE_VERSION, KIND.have, m.reqId, m.all])
    case 'put':
      return encodeCanonical([BLOCKS_WIRE_VERSION, KIND.put, m.reqId, m.spaceId, m.id, m.bytes])
  }
}

const fail = (why: string): never => {
  throw new MalformedBlocks(why)
}

const reqIdOf = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : fail('reqId'))
const spaceIdOf = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= BLOCKS_WIRE.maxSpaceIdChars ? v : fail('spaceId'))
const blockIdOf = (v: unknown) => (isBase58(v) && v.length <= BLOCKS_WIRE.maxBlockIdChars ? v : fail('blockId'))
const idsOf = (v: unknown, max: number) => (Array.isArray(v) && v.length <= max ? v.map(blockIdOf) : fail('ids'))

export function decodeBlocksMessage(bytes: Uint8Array): BlocksMessage {
  if (bytes.length > BLOCKS_WIRE.maxFrameBytes) fail('frame too large')
  let w: unknown
  try {
    // The frame is the handler's own (sync/p2p/frames.ts), so a block's bytes may stay a view of it.
    w = decodeCanonical(bytes, { byteViews: true })
  } catch {
    return fail('not canonical CBOR')
  }
  if (!Array.isArray(w) || w[0] !== BLOCKS_WIRE_VERSION) return fail('version')
  switch (w[1]) {
    case KIND.want:
      if (w.length !== 5) fail('want arity')
      return { kind: 'want', reqId: reqIdOf(w[2]), spaceId: spaceIdOf(w[3]), ids: idsOf(w[4], BLOCKS_WIRE.wantMax) }
    case KIND.block:
      if (w.length !== 5 || !(w[4] instanceof Uint8Array)) fail('block shape')
      return { kind: 'block', reqId: reqIdOf(w[2]), id: blockIdOf(w[3]), bytes: w[4] as Uint8Array }
    case KIND.none:
      if (w.length !== 4) fail('none arity')
      return { kind: 'none', reqId: reqIdOf(w[2]), ids: idsOf(w[3], BLOCKS_WIRE.wantMax) }
    case KIND.has:
      if (w.length !== 5) fail('has arity')
      return { kind: 'has', reqId: reqIdOf(w[2]), spaceId: spaceIdOf(w[3]), ids: idsOf(w[4], BLOCKS_WIRE.hasMax) }
    case KIND.have:
      if (w.length !== 4 || typeof w[3] !== 'boolean') fail('have shape')
      return { kind: 'have', reqId: reqIdOf(w[2]), all: w[3] as boolean }
    case KIND.put:
      if (w.length !== 6 || !(w[5] instanceof Uint8Array)) fail('put shape')
      return { kind: 'put', reqId: reqIdOf(w[2]), spaceId: spaceIdOf(w[3]), id: blockIdOf(w[4]), bytes: w[5] as Uint8Array }
    default:
      return fail('kind')
  }
}
