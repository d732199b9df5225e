/* eslint-disable @typescript-eslint/only-throw-error -- a refusal throws one preallocated sentinel, caught by the caller, which then decodes with cborg: no stack is captured per refusal on the ingest path. */
import { asciiString } from '../core/ascii.ts'
import { CborCursor, UNUSUAL } from '../core/cbor-reader.ts'

/**
 * A direct reader for the one shape every change has on the wire: the canonical CBOR of
 * [bytes unsigned, bytes signature], where `unsigned` is the 11-item header tuple of
 * change.ts (uint, text x2, [text...], text x2, uint x3, text, bytes).
 *
 * cborg's generic decoder builds a token object per item and spent about 15 µs a change on
 * the ingest thread; this walks the bytes once. It only ever accepts what
 * `decodeCanonical` (cborg, strict) accepts for that shape, with the same values: minimal
 * length and integer forms, definite lengths, no trailing bytes, and text limited to the
 * base58 alphabet (every header string is an id or empty). Anything else returns undefined
 * and the caller decodes with cborg, which keeps the final word on odd input, so both
 * paths agree on every byte string (test/sync/envelope-reader.test.ts fuzzes that).
 */
export interface EnvelopeParts {
  header: unknown[]
  signed: Uint8Array
  signature: Uint8Array
  /** Every text field is already known to be base58 (or empty). */
  base58: boolean
}

const MAJOR_UINT = 0
const MAJOR_BYTES = 2
const MAJOR_TEXT = 3
const MAJOR_ARRAY = 4

// Base58 alphabet membership by char code (Bitcoin alphabet: no 0, O, I, l).
const BASE58 = new Uint8Array(128)
for (const ch of '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz') BASE58[ch.charCodeAt(0)] = 1

const SLOT = { space: 0, tree: 1, aclHead: 2, author: 3, readKey: 4 } as const
const recent = new Array<{ bytes: Uint8Array; text: string } | undefined>(5)

class Reader extends CborCursor {
  uint(): number {
    return this.head(MAJOR_UINT)
  }

  bytes(): Uint8Array {
    const n = this.head(MAJOR_BYTES)
    this.need(n)
    const out = this.b.subarray(this.pos, this.pos + n)
    this.pos += n
    return out
  }

  /**
   * A text string made only of base58 characters (or empty), as a flat JS string. `slot`
   * names a header field whose value mostly repeats from one change to the next (space,
   * tree, ACL head, author, read key): equal bytes give back the same string, unbuilt.
   */
  id(slot = -1): string {
    const n = this.head(MAJOR_TEXT)
    this.need(n)
    const b = this.b
    const from = this.pos
    this.pos += n
    if (n === 0) return ''
    const last = slot >= 0 ? recent[slot] : undefined
    if (last && last.bytes.length === n) {
      let same = true
      for (let i = 0; i < n; i++) {
        if (last.bytes[i] !== b[from + i]) {
          same = false
          break
        }
      }
      if (same) return last.text
    }
    for (let i = from; i < from + n; i++) if (b[i] >= 128 || BASE58[b[i]] === 0) throw UNUSUAL
    const text = asciiString(b, from, from + n)
    if (slot >= 0 && n <= 64) recent[slot] = { bytes: b.slice(from, from + n), text }
    return text
  }

  array(): number {
    return this.head(MAJOR_ARRAY)
  }

  done(): boolean {
    return this.pos === this.end
  }
}

/** Bytes an item head takes, from its first byte (only called on a head already accepted). */
const itemHeadLength = (first: number): number => {
  const info = first & 0x1f
  return info < 24 ? 1 : 1 + (1 << (info - 24))
}

/** The envelope's parts, or undefined when the bytes are not the plain canonical shape. */
export function readEnvelope(raw: Uint8Array): EnvelopeParts | undefined {
  try {
    const outer = new Reader(raw, 0, raw.length)
    if (outer.array() !== 2) return undefined
    const signedAt = outer.pos + itemHeadLength(raw[outer.pos])
    const signed = outer.bytes()
    const signature = outer.bytes()
    if (!outer.done()) return undefined
    // The header is read in place, inside the outer buffer.
    const r = new Reader(raw, signedAt, signedAt + signed.length)
    if (r.array() !== 11) return undefined
    const version = r.uint()
    const spaceId = r.id(SLOT.space)
    const treeId = r.id(SLOT.tree)
    const prevCount = r.array()
    if (prevCount > signed.length) return undefined
    const prevIds: string[] = new Array<string>(prevCount)
    for (let i = 0; i < prevCount; i++) prevIds[i] = r.id()
    const aclHeadId = r.id(SLOT.aclHead)
    const author = r.id(SLOT.author)
    const seq = r.uint()
    const lamport = r.uint()
    const timestamp = r.uint()
    const readKeyId = r.id(SLOT.readKey)
    const payload = r.bytes()
    if (!r.done()) return undefined
    return { header: [version, spaceId, treeId, prevIds, aclHeadId, author, seq, lamport, timestamp, readKeyId, payload], signed, signature, base58: true }
  } catch (err) {
    if (err === UNUSUAL) return undefined
    throw err
  }
}
