import { describe, expect, it } from 'vitest'
import { FtsIndex } from '../../sync/modules/search/fts-index.ts'
import { FtsStore, type FtsMeta } from '../../sync/modules/search/fts-store.ts'
import { SEARCH_LIMITS, SEARCH_STORES } from '../../sync/modules/search/limits.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'

const enc = new TextEncoder()

/** minisearch's state as plain data, postings and terms sorted (iteration order is not state). */
function state(index: FtsIndex) {
  const ms = (index as unknown as { ms: Record<string, unknown> }).ms as unknown as {
    _documentCount: number
    _nextId: number
    _dirtCount: number
    _avgFieldLength: number[]
    _fieldIds: Record<string, number>
    _documentIds: Map<number, string>
    _idToShortId: Map<string, number>
    _fieldLength: Map<number, number[]>
    _storedFields: Map<number, unknown>
    _index: Iterable<[string, Map<number, Map<number, number>>]>
  }
  const byNum = <V>(m: Map<number, V>) => [...m].sort((a, b) => a[0] - b[0])
  return {
    counts: [ms._documentCount, ms._nextId, ms._dirtCount],
    avg: ms._avgFieldLength,
    fieldIds: ms._fieldIds,
    ids: byNum(ms._documentIds),
    shortIds: [...ms._idToShortId].sort((a, b) => (a[0] < b[0] ? -1 : 1)),
    lengths: byNum(ms._fieldLength),
    stored: byNum(ms._storedFields),
    terms: [...ms._index].map(([t, data]) => [t, byNum(data).map(([f, freqs]) => [f, byNum(freqs)])] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1)),
  }
}

/** Waits for minisearch's background vacuum (removals start one), so states compare at rest. */
async function vacuumed(index: FtsIndex) {
  const ms = (index as unknown as { ms: { isVacuuming: boolean } }).ms
  while (ms.isVacuuming) await new Promise((r) => setTimeout(r, 5))
}

async function sample(): Promise<FtsIndex> {
  const index = FtsIndex.empty()
  for (let i = 0; i < 3_000; i++) index.apply({ k: `o${i}/props`, t: `word${i % 97} item${i} écrit ${'long'.repeat(i % 5)}` })
  // Removals and rewrites leave dirt (discarded ids still in postings) that the state keeps.
  for (let i = 0; i < 3_000; i += 7) index.apply({ k: `o${i}/props` })
  for (let i = 1; i < 3_000; i += 11) index.apply({ k: `o${i}/props`, t: 'rewritten words' })
  index.apply({ k: 'x/editor/editor_blocks/b%2F1', t: 'a record document' })
  await vacuumed(index)
  return index
}

describe('FtsIndex binary base', () => {
  it('loads into the same minisearch state as the index it was written from, and answers the same', async () => {
    const index = await sample()
    const loaded = FtsIndex.loadBinary(index.serializeBinary())
    expect(state(loaded)).toEqual(state(index))
    expect(loaded.size).toBe(index.size)
    expect([...loaded.objectIds()].sort()).toEqual([...index.objectIds()].sort())
    for (const q of ['word5', 'rewritten', 'item12', 'ecrit', 'record', 'item29']) {
      expect(loaded.search(q, { limit: 10_000 }).sort((a, b) => (a.key < b.key ? -1 : 1))).toEqual(index.search(q, { limit: 10_000 }).sort((a, b) => (a.key < b.key ? -1 : 1)))
    }
    // It keeps working as an index: the same operations move both alike.
    for (const op of [{ k: 'o3/props', t: 'fresh words' }, { k: 'o4/props' }, { o: 'x' }]) expect(loaded.apply(op)).toBe(index.apply(op))
    await vacuumed(index)
    await vacuumed(loaded)
    expect(state(loaded)).toEqual(state(index))
  })

  it('refuses bytes it cannot read', async () => {
    const bytes = (await sample()).serializeBinary()
    expect(() => FtsIndex.loadBinary(bytes.subarray(0, bytes.length - 8))).toThrow()
    expect(() => FtsIndex.loadBinary(enc.encode('{"index":{}}'))).toThrow()
    const longer = new Uint8Array(bytes.length + 4)
    longer.set(bytes)
    expect(() => FtsIndex.loadBinary(longer)).toThrow()
    // Words in another byte order than this platform's (a database moved across platforms).
    const dv = new DataView(bytes.buffer, bytes.byteOffset)
    const hlen = dv.getUint32(4, true)
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + hlen))) as { little: boolean }
    expect(typeof header.little).toBe('boolean')
    const other = enc.encode(JSON.stringify({ ...header, little: !header.little }))
    const start = 8 + hlen + ((4 - (hlen % 4)) % 4)
    const otherStart = 8 + other.length + ((4 - (other.length % 4)) % 4)
    const flipped = new Uint8Array(otherStart + bytes.length - start)
    flipped.set(bytes.subarray(0, 4))
    new DataView(flipped.buffer).setUint32(4, other.length, true)
    flipped.set(other, 8)
    flipped.set(bytes.subarray(start), otherStart)
    expect(() => FtsIndex.loadBinary(flipped)).toThrow(/byte order/)
  })

  it('the store writes bases in the binary form across chunks; a base in the earlier JSON form still loads', async () => {
    const chunkBytes = SEARCH_LIMITS.chunkBytes
    ;(SEARCH_LIMITS as { chunkBytes: number }).chunkBytes = 4_099
    try {
      const storage = new MemoryStorageAdapter()
      const store = new FtsStore(storage, 'S')
      const index = await sample()
      const meta = await store.save(undefined, index, [], '1', 'sig', true)
      expect(meta.format).toBe(2)
      expect(meta.chunks).toBeGreaterThan(10)
      expect(state((await store.load(meta))!)).toEqual(state(index))

      // A format-1 base (minisearch's JSON, chunked as text) and a delta, as earlier builds wrote them.
      const old = new FtsStore(storage, 'T')
      const text = index.serialize()
      const puts = []
      let chunks = 0
      for (let i = 0; i < text.length; i += 100_000)
        puts.push({ store: SEARCH_STORES.fts, key: `T/base/00000001/${String(chunks++).padStart(8, '0')}`, value: enc.encode(text.slice(i, i + 100_000)) })
      const m1: FtsMeta = { format: 1, gen: 1, chunks, deltas: 0, opsSinceBase: 0, baseDocs: index.size, versionSeq: '1', catalog: 'sig' }
      puts.push({ store: SEARCH_STORES.fts, key: 'T/meta', value: enc.encode(JSON.stringify(m1)) })
      await storage.commit({ puts, dels: [] })
      const read = (await old.meta())!
      expect(read.format).toBe(1)
      const step = [{ k: 'o2/props', t: 'after the upgrade' }]
      const withDelta = await old.save(read, undefined, step, '2', 'sig')
      expect(withDelta.format).toBe(1)
      index.apply(step[0])
      const loaded = (await old.load(withDelta))!
      expect(loaded.search('upgrade', { limit: 10 }).map((h) => h.key)).toEqual(['o2/props'])
      expect(loaded.size).toBe(index.size)
      // Its next base is binary.
      const next = await old.save(withDelta, loaded, [], '3', 'sig', true)
      expect(next.format).toBe(2)
      expect(state((await old.load(next))!)).toEqual(state(loaded))
    } finally {
      ;(SEARCH_LIMITS as { chunkBytes: number }).chunkBytes = chunkBytes
    }
  })
})
