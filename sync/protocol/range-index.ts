import { sha256 } from '../crypto/hash.ts'
import { utf8 } from '../core/encoding.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import { ELEMENT_BYTES, RANGE_FP_BYTES, ROOT_FP_BYTES } from './limits.ts'

/**
 * The range-hash index of one space (DESIGN 5, docs/protocol.md "Range index").
 *
 * Elements are the space's trees, the ACL tree included (its tree id is the space id). Each
 * element has
 *   - a position: the first 4 bytes (big-endian) of SHA-256 of the tree id (its base58 text, as
 *     UTF-8), which orders elements by a hash of the id and spreads them evenly over [0, 2^32);
 *   - an element hash: the first 8 bytes of SHA-256(tree id text || heads hash), where the heads
 *     hash is SHA-256 of the tree's head ids, sorted, joined by single spaces.
 * A range is a bit prefix of the position (`len` bits, value `prefix`); its fingerprint is the
 * XOR of its element hashes plus its element count, so it updates in O(log n) when one tree's
 * heads change. Ranges split like any-sync's ldiff: into 2^bits equal sub-ranges, with no
 * boundaries on the wire because both sides derive them from the prefix.
 */

export interface Fingerprint {
  lo: number
  hi: number
  count: number
}

export interface Element {
  id: string
  pos: number
  lo: number
  hi: number
}

const be32 = (b: Uint8Array, o = 0) => ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0

/** Position of an id: the first 4 bytes (big-endian) of SHA-256 of its base58 text. */
export const positionOf = (id: string): number => be32(sha256(utf8(id)))

/** SHA-256 of the sorted head ids' base58 text joined by single spaces: what an element commits to. */
export function headsHashOf(heads: readonly string[]): Uint8Array {
  return sha256(utf8([...heads].sort().join(' ')))
}

/** Start and end (exclusive) of a range in position space; end may be 2^32. */
export function rangeBounds(prefix: number, len: number): [number, number] {
  const width = 2 ** (32 - len)
  const start = prefix * width
  return [start, start + width]
}

/** A set of (id, heads hash) with XOR range fingerprints over hashed positions. */
export class RangeIndex {
  private readonly elems = new Map<string, Element & { idx: number }>()
  private sorted: Array<Element & { idx: number }> = []
  private poss = new Uint32Array(0)
  private bitLo = new Int32Array(1)
  private bitHi = new Int32Array(1)
  private dirty = false

  get size() {
    return this.elems.size
  }

  has(id: string) {
    return this.elems.has(id)
  }

  /** Adds or updates an element; `headsHash` is `headsHashOf(heads)` (or any digest of them). */
  set(id: string, headsHash: Uint8Array) {
    const idb = utf8(id)
    const buf = new Uint8Array(idb.length + headsHash.length)
    buf.set(idb)
    buf.set(headsHash, idb.length)
    const h = sha256(buf)
    const lo = be32(h) | 0
    const hi = be32(h, 4) | 0
    const cur = this.elems.get(id)
    if (cur) {
      if (cur.lo === lo && cur.hi === hi) return
      if (!this.dirty) this.bitUpdate(cur.idx, cur.lo ^ lo, cur.hi ^ hi)
      cur.lo = lo
      cur.hi = hi
      return
    }
    this.elems.set(id, { id, pos: be32(sha256(idb)), lo, hi, idx: -1 })
    this.dirty = true
  }

  delete(id: string) {
    if (this.elems.delete(id)) this.dirty = true
  }

  /** Fingerprint of the range of `len`-bit prefix `prefix` (len 0: the whole space). */
  fingerprint(prefix = 0, len = 0): Fingerprint {
    this.build()
    const [a, b] = this.bounds(prefix, len)
    let lo = 0
    let hi = 0
    for (let i = b; i > 0; i -= i & -i) {
      lo ^= this.bitLo[i]
      hi ^= this.bitHi[i]
    }
    for (let i = a; i > 0; i -= i & -i) {
      lo ^= this.bitLo[i]
      hi ^= this.bitHi[i]
    }
    return { lo: lo >>> 0, hi: hi >>> 0, count: b - a }
  }

  /** Number of elements in a range. */
  count(prefix = 0, len = 0): number {
    this.build()
    const [a, b] = this.bounds(prefix, len)
    return b - a
  }

  /** The elements of a range, by position then id. */
  elements(prefix = 0, len = 0): Element[] {
    this.build()
    const [a, b] = this.bounds(prefix, len)
    const out: Element[] = []
    for (let i = a; i < b; i++) {
      const e = this.sorted[i]
      out.push({ id: e.id, pos: e.pos, lo: e.lo >>> 0, hi: e.hi >>> 0 })
    }
    return out
  }

  /** Ids of the elements at exactly this position (almost always zero or one). */
  idsAt(pos: number): string[] {
    return this.elements(pos, 32).map((e) => e.id)
  }

  /** Every id in the index. */
  ids(): string[] {
    return [...this.elems.keys()]
  }

  private bounds(prefix: number, len: number): [number, number] {
    const [start, end] = rangeBounds(prefix, len)
    return [this.lowerBound(start), end > 0xffffffff ? this.sorted.length : this.lowerBound(end)]
  }

  private lowerBound(pos: number): number {
    let lo = 0
    let hi = this.poss.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.poss[mid] < pos) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  private bitUpdate(idx: number, dlo: number, dhi: number) {
    for (let i = idx + 1; i < this.bitLo.length; i += i & -i) {
      this.bitLo[i] ^= dlo
      this.bitHi[i] ^= dhi
    }
  }

  private build() {
    if (!this.dirty) return
    this.dirty = false
    this.sorted = [...this.elems.values()].sort((x, y) => x.pos - y.pos || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
    const n = this.sorted.length
    this.poss = new Uint32Array(n)
    this.bitLo = new Int32Array(n + 1)
    this.bitHi = new Int32Array(n + 1)
    for (let i = 0; i < n; i++) {
      const e = this.sorted[i]
      e.idx = i
      this.poss[i] = e.pos
      this.bitLo[i + 1] = e.lo
      this.bitHi[i + 1] = e.hi
    }
    // Linear Fenwick construction: push each node's value into its parent.
    for (let i = 1; i <= n; i++) {
      const p = i + (i & -i)
      if (p <= n) {
        this.bitLo[p] ^= this.bitLo[i]
        this.bitHi[p] ^= this.bitHi[i]
      }
    }
  }
}

// ------------------------------------------------------------------------------- wire forms

/** The unsalted whole-space fingerprint sent in `sync`: the 8 XOR bytes. */
export function rootFpBytes(fp: Fingerprint): Uint8Array {
  const out = new Uint8Array(ROOT_FP_BYTES)
  const dv = new DataView(out.buffer)
  dv.setUint32(0, fp.lo)
  dv.setUint32(4, fp.hi)
  return out
}

const saltBuf = new Uint8Array(16)
const saltDv = new DataView(saltBuf.buffer)

/**
 * The 4-byte salted fingerprint of a range: SHA-256(salt u32 || lo u32 || hi u32 || count u32),
 * first 4 bytes. The salt is the exchange's request id, so a chance collision in one exchange
 * does not repeat in the next.
 */
export function rangeFp(salt: number, fp: Fingerprint, out: Uint8Array, offset: number) {
  saltDv.setUint32(0, salt)
  saltDv.setUint32(4, fp.lo)
  saltDv.setUint32(8, fp.hi)
  saltDv.setUint32(12, fp.count)
  out.set(sha256(saltBuf).subarray(0, RANGE_FP_BYTES), offset)
}

/** The 8-byte wire form of an element: position u32 || first 4 bytes of SHA-256(salt || lo || hi). */
export function elementEntry(salt: number, e: Element, out: Uint8Array, offset: number) {
  saltDv.setUint32(0, salt)
  saltDv.setUint32(4, e.lo)
  saltDv.setUint32(8, e.hi)
  const h = sha256(saltBuf.subarray(0, 12))
  const dv = new DataView(out.buffer, out.byteOffset)
  dv.setUint32(offset, e.pos)
  out.set(h.subarray(0, ELEMENT_BYTES - 4), offset + 4)
}

// ------------------------------------------------------------------------------- replica binding

/**
 * The range-hash index of one replica's space, kept in step with it (not the "space index
 * object" of sync/space, which lists objects): built from every tree on first use, then updated
 * for the trees each commit touched (a commit listener), lazily at the next read.
 */
export class SpaceRangeIndex {
  readonly index = new RangeIndex()
  private readonly dirty = new Set<string>()
  private all = true
  /** Stops listening to the replica. */
  readonly close: () => void

  constructor(readonly replica: SpaceReplica) {
    this.close = replica.addCommitListener((info) => {
      for (const t of info.treeIds) this.dirty.add(t)
    })
  }

  /** Marks every tree for recomputation (after anything that bypassed commits). */
  invalidate() {
    this.all = true
  }

  /** The up-to-date index. */
  current(): RangeIndex {
    const r = this.replica
    if (this.all) {
      this.all = false
      this.dirty.clear()
      const present = new Set([r.spaceId, ...r.treeIds()])
      for (const id of this.index.ids()) if (!present.has(id)) this.index.delete(id)
      for (const t of present) this.update(t)
    } else if (this.dirty.size) {
      for (const t of this.dirty) this.update(t)
      this.dirty.clear()
    }
    return this.index
  }

  private update(treeId: string) {
    const heads = this.replica.heads(treeId)
    if (heads.length === 0) this.index.delete(treeId)
    else this.index.set(treeId, headsHashOf(heads))
  }
}
