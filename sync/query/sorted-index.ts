import type { CompiledSort, Entry } from './sort.ts'
import type { Doc } from './values.ts'

/** Entries per block: a split at twice this, so an insert or delete moves at most ~1,000 references. */
const BLOCK = 512

/**
 * A collection's documents kept in one sort order, maintained as documents change, so a page
 * of a sorted query costs O(offset / BLOCK + limit) instead of a pass over every document with
 * a heap of offset + limit entries (13 ms at 10,000 objects and offset 5,000, per request).
 *
 * The structure is a list of sorted blocks (a one-level B+tree): an update is two binary
 * searches and a splice inside one block of at most 2 x BLOCK entries; skipping `offset`
 * entries skips whole blocks by their lengths. A balanced tree library would give the same
 * bounds; this is ~100 lines with no dependency, and block arrays iterate fast (docs/api.md
 * "Queries and the event loop").
 *
 * Entries are the sort's own (`CompiledSort.entry`), compared with its `compare`, whose last
 * tie-break is the id: every entry has one exact place, so a removal finds it by search.
 */
export class SortedIndex {
  private blocks: Entry[][] = []
  private readonly byId = new Map<string, Entry>()

  constructor(
    readonly sort: CompiledSort,
    docs: Iterable<Doc>,
  ) {
    const all: Entry[] = []
    for (const d of docs) {
      const e = sort.entry(d)
      all.push(e)
      this.byId.set(e.id, e)
    }
    all.sort(sort.compare)
    for (let i = 0; i < all.length; i += BLOCK) this.blocks.push(all.slice(i, i + BLOCK))
  }

  get size(): number {
    return this.byId.size
  }

  upsert(doc: Doc): void {
    this.remove(String(doc.id))
    const e = this.sort.entry(doc)
    this.byId.set(e.id, e)
    this.insert(e)
  }

  remove(id: string): void {
    const e = this.byId.get(id)
    if (!e) return
    this.byId.delete(id)
    const b = this.blockFor(e)
    const block = this.blocks[b]
    if (!block) return
    const i = this.position(block, e)
    if (block[i] !== e) return
    block.splice(i, 1)
    if (block.length === 0) this.blocks.splice(b, 1)
  }

  /**
   * Entries in order from the `offset`-th, while `take` returns true. Whole blocks before
   * `offset` are skipped by length; nothing before them is read.
   */
  walk(offset: number, take: (e: Entry) => boolean): void {
    let b = 0
    let skip = offset
    while (b < this.blocks.length && skip >= this.blocks[b].length) skip -= this.blocks[b++].length
    for (; b < this.blocks.length; b++) {
      const block = this.blocks[b]
      for (let i = skip; i < block.length; i++) if (!take(block[i])) return
      skip = 0
    }
  }

  /** Every entry in order (a generator, so a stepped evaluation can pause between entries). */
  *entries(): Generator<Entry, void, void> {
    for (const block of this.blocks) yield* block
  }

  /** Every entry in order, copied (references only): a view later writes do not move. */
  toArray(): Entry[] {
    return this.blocks.flat()
  }

  private insert(e: Entry): void {
    if (this.blocks.length === 0) {
      this.blocks.push([e])
      return
    }
    const b = Math.min(this.blockFor(e), this.blocks.length - 1)
    const block = this.blocks[b]
    block.splice(this.position(block, e), 0, e)
    if (block.length > 2 * BLOCK) this.blocks.splice(b, 1, block.slice(0, BLOCK), block.slice(BLOCK))
  }

  /** The first block whose last entry is not before `e` (blocks.length when none). */
  private blockFor(e: Entry): number {
    const cmp = this.sort.compare
    let lo = 0
    let hi = this.blocks.length
    while (lo < hi) {
      const m = (lo + hi) >>> 1
      const block = this.blocks[m]
      if (cmp(block[block.length - 1], e) < 0) lo = m + 1
      else hi = m
    }
    return lo
  }

  /** The first index in `block` whose entry is not before `e`. */
  private position(block: Entry[], e: Entry): number {
    const cmp = this.sort.compare
    let lo = 0
    let hi = block.length
    while (lo < hi) {
      const m = (lo + hi) >>> 1
      if (cmp(block[m], e) < 0) lo = m + 1
      else hi = m
    }
    return lo
  }
}

/**
 * When collections keep a sort order (InMemoryIndex `autoSort`; object rows and cached
 * datasets): from 1,000 documents, on the second query with that sort, at most 4 orders per
 * collection (an entry per document each: about 100 bytes, so 40 MB for 4 orders of 100,000).
 */
export const AUTO_SORT = { minDocs: 1_000, afterQueries: 2, maxSorts: 4 } as const
