import type { StorageAdapter, WriteBatch } from '../../storage/adapter.ts'
import { SEARCH_LIMITS, SEARCH_STORES } from './limits.ts'

/**
 * Vectors per indexed document, of one model, searched by brute force: a dot product with
 * every unit vector (cosine). Up to `maxVectors` that stays in tens of milliseconds at a few
 * hundred dimensions (docs/search.md); no vector library is needed below that. Persisted one
 * row per document (`<spaceId>/<model>/<docKey>`), so a write costs its own rows only.
 */
export class VectorStore {
  private readonly vecs = new Map<string, Float32Array>()
  private readonly S = SEARCH_STORES.vectors

  constructor(
    private readonly storage: StorageAdapter,
    private readonly spaceId: string,
    readonly model: string,
  ) {}

  private prefix() {
    return `${this.spaceId}/${encodeURIComponent(this.model)}/`
  }

  async load(): Promise<void> {
    for (const [k, v] of await this.storage.scan(this.S, { prefix: this.prefix() })) {
      const copy = new Uint8Array(v.byteLength)
      copy.set(v)
      this.vecs.set(k.slice(this.prefix().length), new Float32Array(copy.buffer))
    }
  }

  get size(): number {
    return this.vecs.size
  }

  has(key: string): boolean {
    return this.vecs.has(key)
  }

  get full(): boolean {
    return this.vecs.size >= SEARCH_LIMITS.maxVectors
  }

  put(key: string, v: Float32Array, batch: WriteBatch) {
    this.vecs.set(key, v)
    batch.puts.push({ store: this.S, key: this.prefix() + key, value: new Uint8Array(v.buffer, v.byteOffset, v.byteLength) })
  }

  remove(key: string, batch: WriteBatch) {
    if (!this.vecs.delete(key)) return
    batch.dels.push({ store: this.S, key: this.prefix() + key })
  }

  /** Every vector of one object's documents (keys `<objectId>/...`). */
  removeObject(objectId: string, batch: WriteBatch) {
    const head = objectId + '/'
    for (const key of [...this.vecs.keys()]) if (key.startsWith(head)) this.remove(key, batch)
  }

  /** The `k` nearest documents (cosine), best first, among keys `accept` lets through. */
  nearest(q: Float32Array, k: number, accept?: (key: string) => boolean): Array<{ key: string; score: number }> {
    const best: Array<{ key: string; score: number }> = []
    for (const [key, v] of this.vecs) {
      if (v.length !== q.length || (accept && !accept(key))) continue
      let s = 0
      for (let i = 0; i < v.length; i++) s += v[i] * q[i]
      if (best.length < k) {
        best.push({ key, score: s })
        if (best.length === k) best.sort((a, b) => b.score - a.score)
      } else if (s > best[k - 1].score) {
        best[k - 1] = { key, score: s }
        for (let i = k - 1; i > 0 && best[i].score > best[i - 1].score; i--) [best[i], best[i - 1]] = [best[i - 1], best[i]]
      }
    }
    return best.length < k ? best.sort((a, b) => b.score - a.score) : best
  }
}
