import type { StorageAdapter, WriteBatch } from '../../storage/adapter.ts'
import { concatBytes } from '../../core/encoding.ts'
import { FtsIndex, type IndexOp } from './fts-index.ts'
import { SEARCH_LIMITS, SEARCH_STORES } from './limits.ts'

/**
 * The index on disk, saved in increments: a base snapshot (generation `gen`, cut into chunks)
 * plus deltas, one per drain step, each the index operations of that step. A load reads the
 * base and replays the deltas; once the deltas hold `compactAfterOps` operations (or a quarter of
 * the base's documents), the next save writes a new base and drops the deltas, in one batch.
 * Nothing is rewritten per write: a write costs one delta row of its own operations.
 *
 * `versionSeq` is the replica version the saved index reflects (every commit up to it drained):
 * a load that finds another version is stale and the service rebuilds. `versions: 'space'`
 * says it is the space's own counter, which never repeats a number (issue 42); a meta without
 * it was saved while all spaces of the store shared one counter, whose numbers could repeat,
 * so the service never takes it as current.
 */
export interface FtsMeta {
  /** 2: the base is FtsIndex's binary form; 1 (earlier builds): minisearch's JSON. Deltas are JSON either way. */
  format: 1 | 2
  gen: number
  chunks: number
  deltas: number
  opsSinceBase: number
  baseDocs: number
  versionSeq: string
  /** 'space': `versionSeq` counts this space's commits only (absent: saved before issue 42). */
  versions?: 'space'
  /** Signature of what is indexed (scopes and fields); another one means rebuild. */
  catalog: string
}

/** The format new bases are written in; a meta of format 1 still loads until its next base. */
const FORMAT = 2
const pad = (n: number) => String(n).padStart(8, '0')
const enc = new TextEncoder()
const dec = new TextDecoder()

export class FtsStore {
  private readonly S = SEARCH_STORES.fts
  constructor(
    private readonly storage: StorageAdapter,
    private readonly spaceId: string,
  ) {}

  private key(...parts: Array<string | number>) {
    return [this.spaceId, ...parts.map((p) => (typeof p === 'number' ? pad(p) : p))].join('/')
  }

  async meta(): Promise<FtsMeta | undefined> {
    const raw = await this.storage.get(this.S, this.key('meta'))
    if (!raw) return undefined
    try {
      const m = JSON.parse(dec.decode(raw)) as FtsMeta
      return m.format === 1 || m.format === 2 ? m : undefined
    } catch {
      return undefined
    }
  }

  /**
   * The saved index, or undefined when none is saved or it cannot be read (then rebuild).
   * `progress` hears the documents loaded and operations replayed so far.
   */
  async load(meta: FtsMeta, progress?: (done: number) => void): Promise<FtsIndex | undefined> {
    try {
      const chunks = await this.storage.scan(this.S, { prefix: this.key('base', meta.gen) + '/' })
      if (chunks.length !== meta.chunks) return undefined
      const index =
        meta.chunks === 0
          ? FtsIndex.empty()
          : meta.format === 1
            ? FtsIndex.load(chunks.map(([, v]) => dec.decode(v)).join(''))
            : FtsIndex.loadBinary(concatBytes(...chunks.map(([, v]) => v)))
      let done = index.size
      progress?.(done)
      for (const [, v] of await this.storage.scan(this.S, { prefix: this.key('delta', meta.gen) + '/' })) {
        const ops = JSON.parse(dec.decode(v)) as IndexOp[]
        for (const op of ops) index.apply(op)
        progress?.((done += ops.length))
      }
      return index
    } catch {
      return undefined
    }
  }

  /**
   * Saves one step: its operations as a delta, or a new base when the deltas grew past the
   * compaction bound and `mayCompact` (the drain has caught up: during a burst such as a sync
   * backlog one compaction at its end replaces many), or `forceBase` (after a rebuild). Without
   * `index` (it is not in memory) only a delta can be written; a first save needs it.
   * Returns the meta now on disk.
   */
  async save(
    prev: FtsMeta | undefined,
    index: FtsIndex | undefined,
    ops: readonly IndexOp[],
    versionSeq: string,
    catalog: string,
    forceBase = false,
    mayCompact = true,
  ): Promise<FtsMeta> {
    const batch: WriteBatch = { puts: [], dels: [] }
    const opsSinceBase = (prev?.opsSinceBase ?? 0) + ops.length
    let meta: FtsMeta
    if (index && (!prev || forceBase || (mayCompact && opsSinceBase > Math.max(SEARCH_LIMITS.compactAfterOps, prev.baseDocs * SEARCH_LIMITS.compactFraction)))) {
      const gen = (prev?.gen ?? 0) + 1
      const bytes = index.serializeBinary()
      let chunks = 0
      for (let i = 0; i < bytes.length; i += SEARCH_LIMITS.chunkBytes) {
        batch.puts.push({ store: this.S, key: this.key('base', gen, chunks++), value: bytes.slice(i, i + SEARCH_LIMITS.chunkBytes) })
      }
      if (prev) this.dropGeneration(prev, batch)
      meta = { format: FORMAT, gen, chunks, deltas: 0, opsSinceBase: 0, baseDocs: index.size, versionSeq, versions: 'space', catalog }
    } else {
      if (!prev) throw new Error('a first save of the search index needs the index')
      meta = { ...prev, deltas: prev.deltas + (ops.length ? 1 : 0), opsSinceBase, versionSeq, versions: 'space', catalog }
      if (ops.length) batch.puts.push({ store: this.S, key: this.key('delta', prev.gen, prev.deltas), value: enc.encode(JSON.stringify(ops)) })
    }
    batch.puts.push({ store: this.S, key: this.key('meta'), value: enc.encode(JSON.stringify(meta)) })
    await this.storage.commit(batch)
    return meta
  }

  /** Forgets the saved index (indexing turned off): the next start rebuilds. */
  async clear(prev: FtsMeta | undefined): Promise<void> {
    const batch: WriteBatch = { puts: [], dels: [{ store: this.S, key: this.key('meta') }] }
    if (prev) this.dropGeneration(prev, batch)
    await this.storage.commit(batch)
  }

  /** Bytes the saved index takes (benchmarks and docs). */
  async bytes(): Promise<number> {
    let n = 0
    for (const [k, v] of await this.storage.scan(this.S, { prefix: this.spaceId + '/' })) n += k.length + v.byteLength
    return n
  }

  /** Keys from the meta's counts: no read of the (large) rows being dropped. */
  private dropGeneration(m: FtsMeta, batch: WriteBatch) {
    for (let i = 0; i < m.chunks; i++) batch.dels.push({ store: this.S, key: this.key('base', m.gen, i) })
    for (let i = 0; i < m.deltas; i++) batch.dels.push({ store: this.S, key: this.key('delta', m.gen, i) })
  }
}
