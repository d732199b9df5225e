import { InMemoryIndex, type QuerySource } from '../query/source.ts'
import { AUTO_SORT } from '../query/sorted-index.ts'
import type { Doc } from './rows.ts'

/**
 * Bounds of the dataset cache. A query of a dataset otherwise scans and decodes every stored
 * record (about 70 ms for a 10,000-message chat on a loaded machine), once per query and once
 * per live window opened; the cache keeps the documents of recently queried datasets, kept
 * current by the commit feed, so a query costs its filter and sort only.
 */
export const DATASET_CACHE_LIMITS = {
  /** Datasets held at once (least recently queried go first). */
  maxDatasets: 64,
  /** Documents held across every cached dataset; a dataset larger than this is never cached. */
  maxDocs: 200_000,
} as const

/** Equality indexes built on demand, as for object rows (SpaceEngine OBJECT_AUTO_INDEX). */
const AUTO_INDEX = { minDocs: 1_000, afterLookups: 2, maxPaths: 8 } as const

const key = (objectId: string, dataset: string) => `${objectId}\u0000${dataset}`

/**
 * The documents (overlays laid on) of recently queried datasets of one space. Filled by `load`
 * from a full read, updated record by record by the space engine after each commit and each
 * overlay move, dropped per object when an object is reloaded or deleted. Documents are never
 * mutated once held: an update replaces the document.
 */
export class DatasetCache {
  private readonly entries = new Map<string, { objectId: string; index: InMemoryIndex }>()
  private docs = 0

  /** Documents held over every cached dataset (the memory budget counts them). */
  get size(): number {
    return this.docs
  }

  constructor(private readonly limits: { maxDatasets: number; maxDocs: number } = DATASET_CACHE_LIMITS) {}

  /** The cached source, marked most recently used; undefined when not held. */
  get(objectId: string, dataset: string): QuerySource | undefined {
    const k = key(objectId, dataset)
    const e = this.entries.get(k)
    if (!e) return undefined
    this.entries.delete(k)
    this.entries.set(k, e)
    return e.index
  }

  /** Holds the documents of a dataset just read in full (unless too large to hold). */
  put(objectId: string, dataset: string, docs: readonly Doc[]): QuerySource {
    const index = new InMemoryIndex(['id'], docs, { autoIndex: AUTO_INDEX, autoSort: AUTO_SORT })
    if (docs.length > this.limits.maxDocs) return index
    this.drop(key(objectId, dataset))
    this.entries.set(key(objectId, dataset), { objectId, index })
    this.docs += index.size
    this.evict()
    return index
  }

  /** Whether a dataset is held (the engine updates only those). */
  holds(objectId: string, dataset: string): boolean {
    return this.entries.has(key(objectId, dataset))
  }

  /** A record's current document, or undefined when it is gone (deleted, tombstoned). */
  update(objectId: string, dataset: string, recordId: string, doc: Doc | undefined) {
    const e = this.entries.get(key(objectId, dataset))
    if (!e) return
    const before = e.index.size
    if (doc) e.index.upsert(doc)
    else e.index.remove(recordId)
    this.docs += e.index.size - before
    this.evict()
  }

  /** Forgets every dataset of an object (reloaded wholesale or deleted). */
  dropObject(objectId: string) {
    for (const [k, e] of this.entries) if (e.objectId === objectId) this.drop(k)
  }

  private drop(k: string) {
    const e = this.entries.get(k)
    if (!e) return
    this.docs -= e.index.size
    this.entries.delete(k)
  }

  private evict() {
    for (const k of this.entries.keys()) {
      if (this.entries.size <= this.limits.maxDatasets && this.docs <= this.limits.maxDocs) return
      this.drop(k)
    }
  }
}
