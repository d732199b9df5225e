import MiniSearch, { type Query, type SearchResult } from 'minisearch'
import { docKey, objectOfKey, scopeOfKey } from './doc-key.ts'
import { processTerm, tokenize } from './text.ts'

/** One indexed document: its key (doc-key.ts) and its text. */
export interface IndexedDoc {
  k: string
  t: string
}

/** An index operation as the deltas persist it: text to (re)index, or none to remove the key. */
export interface DocOp {
  k: string
  t?: string
}

/**
 * Every document of object `o` goes. Written by a drain that runs while the index is not in
 * memory (service.ts), which cannot list what the object held; a replay resolves it.
 */
export interface DropObjectOp {
  o: string
}

export type IndexOp = DocOp | DropObjectOp

export const isDropObject = (op: IndexOp): op is DropObjectOp => (op as DropObjectOp).o !== undefined

export interface FtsHit {
  key: string
  score: number
  terms: string[]
}

const OPTIONS = {
  idField: 'k',
  fields: ['t'],
  storeFields: [] as string[],
  tokenize,
  processTerm,
  // Discarded documents leave terms behind until a vacuum; minisearch's default background
  // vacuum cleans them in batches between index operations.
  autoVacuum: true,
}

/**
 * The full-text index of one space: minisearch over one text field per document, plus which
 * keys each object holds (to drop them all when the object goes). Texts are not stored: a
 * snippet reads the text again from the space (service.ts), so the index holds only terms.
 */
export class FtsIndex {
  private ms: MiniSearch<IndexedDoc>
  /** Moves on every change, so a cached answer knows it is stale. */
  version = 0
  private readonly byObject = new Map<string, Set<string>>()

  private constructor(ms: MiniSearch<IndexedDoc>, keys: Iterable<string>) {
    this.ms = ms
    for (const k of keys) this.track(k)
  }

  static empty(): FtsIndex {
    return new FtsIndex(new MiniSearch<IndexedDoc>(OPTIONS), [])
  }

  /** From a base snapshot (`serialize`), without re-tokenizing any document. */
  static load(json: string): FtsIndex {
    const { index, keys } = JSON.parse(json) as { index: unknown; keys: string[] }
    return new FtsIndex(MiniSearch.loadJS<IndexedDoc>(index as Parameters<typeof MiniSearch.loadJS>[0], OPTIONS), keys)
  }

  /**
   * The base in its binary form (`loadBinary`): minisearch's own maps written as numbers, so a
   * load fills them directly instead of parsing minisearch's JSON (objects keyed by decimal
   * strings, each converted back to a Map): about a third of the JSON's load time at 200,000
   * documents (docs/search.md "Restart").
   */
  serializeBinary(): Uint8Array {
    return encodeBinary(this.ms as unknown as MsState)
  }

  /** From `serializeBinary`'s bytes; throws on bytes it cannot read (the caller rebuilds). */
  static loadBinary(bytes: Uint8Array): FtsIndex {
    const { ms, keys } = decodeBinary(bytes)
    return new FtsIndex(ms, keys)
  }

  serialize(): string {
    const keys: string[] = []
    for (const set of this.byObject.values()) for (const k of set) keys.push(k)
    return JSON.stringify({ index: this.ms.toJSON(), keys })
  }

  get size(): number {
    return this.ms.documentCount
  }

  /** Applies one operation; returns it when it changed the index (for the delta log). */
  apply(op: IndexOp): boolean {
    if (isDropObject(op)) {
      let moved = false
      for (const k of [...this.keysOf(op.o)]) moved = this.apply({ k }) || moved
      return moved
    }
    const had = this.ms.has(op.k)
    if (op.t === undefined || op.t === '') {
      if (!had) return false
      this.ms.discard(op.k)
      this.untrack(op.k)
      this.version++
      return true
    }
    if (had) this.ms.discard(op.k)
    this.ms.add({ k: op.k, t: op.t })
    this.track(op.k)
    this.version++
    return true
  }

  keysOf(objectId: string): ReadonlySet<string> {
    return this.byObject.get(objectId) ?? EMPTY
  }

  objectIds(): IterableIterator<string> {
    return this.byObject.keys()
  }

  /**
   * Documents matching every word of `query` (the last word as a prefix too, so a typed
   * word matches before it is finished; every word with `prefixAll`, which is `$text`: no typo
   * tolerance there, a filter must be predictable; otherwise words of 5 letters or more
   * tolerate a typo when exact matching fills less than a page), all `require` words, none of the `exclude` words;
   * in `scopes` when given. Best first.
   */
  search(query: string, opts: { scopes?: ReadonlySet<string>; require?: readonly string[]; exclude?: readonly string[]; limit: number; prefixAll?: boolean }): FtsHit[] {
    const queries: Query[] = [query, ...(opts.require ?? [])]
    let q: Query = queries.length === 1 ? query : { combineWith: 'AND', queries }
    if (opts.exclude && opts.exclude.length > 0) q = { combineWith: 'AND_NOT', queries: [q, { combineWith: 'OR', queries: [...opts.exclude] }] }
    const scopes = opts.scopes
    const run = (fuzzy: boolean): SearchResult[] =>
      this.ms.search(q, {
        combineWith: 'AND',
        prefix: opts.prefixAll ? true : (_term, i, terms) => i === terms.length - 1,
        fuzzy: fuzzy ? (term) => (term.length >= 5 ? 0.2 : false) : false,
        ...(scopes ? { filter: (r: SearchResult) => scopes.has(scopeOfKey(r.id as string)) } : {}),
      })
    // Typo tolerance only when exact words and prefixes fall short of a page: expanding every
    // long word to its neighbours costs most of a search and rarely changes a full page.
    let results = run(false)
    if (!opts.prefixAll && results.length < opts.limit) results = run(true)
    const out: FtsHit[] = []
    for (const r of results) {
      if (out.length >= opts.limit) break
      out.push({ key: r.id as string, score: r.score, terms: r.terms })
    }
    return out
  }

  private track(k: string) {
    const o = objectOfKey(k)
    let set = this.byObject.get(o)
    if (!set) this.byObject.set(o, (set = new Set()))
    set.add(k)
  }

  private untrack(k: string) {
    const o = objectOfKey(k)
    const set = this.byObject.get(o)
    if (!set) return
    set.delete(k)
    if (set.size === 0) this.byObject.delete(o)
  }
}

const EMPTY: ReadonlySet<string> = new Set()

/**
 * The fields of a minisearch instance the binary form reads and fills: the same ones
 * `toJSON`/`loadJS` carry (minisearch 7), so a binary load equals a JSON load field for field
 * (test/search/fts-binary.test.ts compares both through `toJSON`).
 */
interface MsState {
  _documentCount: number
  _nextId: number
  _documentIds: Map<number, string>
  _idToShortId: Map<string, number>
  _fieldIds: Record<string, number>
  _fieldLength: Map<number, Array<number | null | undefined>>
  _avgFieldLength: number[]
  _storedFields: Map<number, Record<string, unknown>>
  _dirtCount: number
  _index: { set(term: string, data: Map<number, Map<number, number>>): unknown; [Symbol.iterator](): Iterator<[string, Map<number, Map<number, number>>]> }
}

/** 'FTB1': the first four bytes of a binary base (a JSON base starts with '{'). */
const MAGIC = 0x31425446
const NONE = 0xffffffff
const te = new TextEncoder()
const td = new TextDecoder()
/** The words are in the writer's byte order, named in the header: another order reads as no base (rebuilt). */
const LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/**
 * Layout: u32 magic, u32 byte length of a JSON header, the header (counters, field ids,
 * average lengths, stored fields, every document id and every term, in minisearch's own
 * iteration order), zero padding to 4 bytes, then u32 words in the platform's byte order (named
 * in the header; little-endian wherever svc runs): per document its short id; per document its
 * field lengths (count, then each, NONE for a hole); per term its fields (count, then per
 * field: id, posting count, then short id and frequency pairs). The two u32 before the header
 * are little-endian.
 */
function encodeBinary(ms: MsState): Uint8Array {
  const ids: string[] = []
  const terms: string[] = []
  const words: number[] = []
  for (const [shortId, id] of ms._documentIds) {
    ids.push(id)
    words.push(shortId)
  }
  // Field lengths by document, in _documentIds order (their key sets are the same: discard drops both).
  for (const shortId of ms._documentIds.keys()) {
    const lens = ms._fieldLength.get(shortId) ?? []
    words.push(lens.length)
    for (let i = 0; i < lens.length; i++) words.push(lens[i] == null ? NONE : lens[i]!)
  }
  for (const [term, data] of ms._index) {
    terms.push(term)
    words.push(data.size)
    for (const [fieldId, freqs] of data) {
      words.push(fieldId, freqs.size)
      for (const [doc, f] of freqs) words.push(doc, f)
    }
  }
  const header = te.encode(
    JSON.stringify({
      documentCount: ms._documentCount,
      nextId: ms._nextId,
      fieldIds: ms._fieldIds,
      averageFieldLength: ms._avgFieldLength,
      dirtCount: ms._dirtCount,
      storedFields: [...ms._storedFields],
      little: LITTLE,
      ids,
      terms,
    }),
  )
  const start = 8 + header.length + ((4 - (header.length % 4)) % 4)
  const out = new Uint8Array(start + words.length * 4)
  const dv = new DataView(out.buffer)
  dv.setUint32(0, MAGIC, true)
  dv.setUint32(4, header.length, true)
  out.set(header, 8)
  const body = new Uint32Array(out.buffer, start, words.length)
  for (let i = 0; i < words.length; i++) body[i] = words[i]
  return out
}

function decodeBinary(bytes: Uint8Array): { ms: MiniSearch<IndexedDoc>; keys: string[] } {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.byteLength < 8 || dv.getUint32(0, true) !== MAGIC) throw new Error('not a binary search index')
  const hlen = dv.getUint32(4, true)
  const h = JSON.parse(td.decode(bytes.subarray(8, 8 + hlen))) as {
    documentCount: number
    nextId: number
    fieldIds: Record<string, number>
    averageFieldLength: number[]
    dirtCount: number
    storedFields: Array<[number, Record<string, unknown>]>
    little: boolean
    ids: string[]
    terms: string[]
  }
  if (h.little !== LITTLE) throw new Error('binary search index written in another byte order')
  const start = 8 + hlen + ((4 - (hlen % 4)) % 4)
  if ((bytes.byteLength - start) % 4 !== 0) throw new Error('truncated binary search index')
  // Aligned copy when the bytes do not sit on a 4-byte boundary (a storage read's own buffer).
  const aligned = (bytes.byteOffset + start) % 4 === 0 ? bytes : bytes.slice()
  const body = new Uint32Array(aligned.buffer, aligned.byteOffset + start, (bytes.byteLength - start) / 4)
  const ms = MiniSearch.loadJS<IndexedDoc>(
    {
      documentCount: h.documentCount,
      nextId: h.nextId,
      fieldIds: h.fieldIds,
      averageFieldLength: h.averageFieldLength,
      dirtCount: h.dirtCount,
      documentIds: {},
      fieldLength: {},
      storedFields: {},
      index: [],
      serializationVersion: 2,
    },
    OPTIONS,
  )
  const st = ms as unknown as MsState
  const at = (i: number) => {
    if (i >= body.length) throw new Error('truncated binary search index')
    return body[i]
  }
  let p = 0
  const n = h.ids.length
  const shortIds = new Array<number>(n)
  for (let i = 0; i < n; i++) {
    const s = at(p++)
    shortIds[i] = s
    st._documentIds.set(s, h.ids[i])
    st._idToShortId.set(h.ids[i], s)
  }
  for (let i = 0; i < n; i++) {
    const len = at(p++)
    const lens = new Array<number | null>(len)
    for (let j = 0; j < len; j++) {
      const v = at(p++)
      lens[j] = v === NONE ? null : v
    }
    st._fieldLength.set(shortIds[i], lens)
  }
  for (const [s, f] of h.storedFields) st._storedFields.set(s, f)
  for (const term of h.terms) {
    const data = new Map<number, Map<number, number>>()
    for (let fields = at(p++); fields > 0; fields--) {
      const fieldId = at(p++)
      const freqs = new Map<number, number>()
      for (let c = at(p++); c > 0; c--) {
        const doc = at(p++)
        freqs.set(doc, at(p++))
      }
      data.set(fieldId, freqs)
    }
    st._index.set(term, data)
  }
  if (p !== body.length) throw new Error('binary search index has trailing bytes')
  return { ms, keys: h.ids }
}
export { docKey }
