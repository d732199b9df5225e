import type { ScanOptions, StorageAdapter, WriteBatch } from './adapter.ts'
import { checkBatch, checkScanOptions, compareUtf8, lowerBound, scanSorted } from './scan.ts'

export { compareUtf8 }

/** Batches adding at most this many new keys to a store keep its sorted key list by insertion. */
const INCREMENTAL_SORT_MAX = 64

/**
 * In-memory adapter: tests, the simulator, and browsers that opt out of persistence.
 * Values are copied on the way in and out, like the persistent adapters, so neither a caller
 * reusing a buffer nor one mutating a result can change what is stored.
 */
export class MemoryStorageAdapter implements StorageAdapter {
  readonly name = 'memory'
  private readonly stores = new Map<string, Map<string, Uint8Array>>()
  /** Keys of a store sorted by compareUtf8; absent until the next scan after a bulk insert. */
  private readonly sorted = new Map<string, string[]>()
  private closed = false

  async get(store: string, key: string) {
    this.check()
    const v = this.stores.get(store)?.get(key)
    return v && v.slice()
  }

  async getMany(store: string, keys: readonly string[]) {
    this.check()
    const s = this.stores.get(store)
    const found = keys.map((k) => s?.get(k))
    // Copies into one buffer for the whole answer, each value a view of its own bytes: an
    // ArrayBuffer per value cost more than the copying (head sync reads a reply's changes here,
    // a thousand at a time). A caller keeping one value keeps the answer's buffer; none keeps
    // them (change bytes go out on the wire, records are decoded).
    let total = 0
    for (const v of found) if (v) total += v.length
    const buf = new Uint8Array(total)
    let at = 0
    return found.map((v) => {
      if (!v) return undefined
      const out = buf.subarray(at, at + v.length)
      out.set(v)
      at += v.length
      return out
    })
  }

  async scan(store: string, options: ScanOptions = {}) {
    this.check()
    checkScanOptions(options)
    const s = this.stores.get(store)
    if (!s) return []
    let keys = this.sorted.get(store)
    if (!keys) {
      keys = [...s.keys()].sort(compareUtf8)
      this.sorted.set(store, keys)
    }
    return scanSorted(keys, options).map((k): [string, Uint8Array] => [k, s.get(k)!.slice()])
  }

  async commit(batch: WriteBatch) {
    this.check()
    checkBatch(batch)
    const added = new Map<string, string[]>()
    for (const { store, key, value } of batch.puts) {
      let s = this.stores.get(store)
      if (!s) {
        s = new Map()
        this.stores.set(store, s)
      }
      if (!s.has(key)) {
        let a = added.get(store)
        if (!a) added.set(store, (a = []))
        a.push(key)
      }
      // new Uint8Array(view) copies exactly the view's bytes (and turns a Buffer into a Uint8Array).
      s.set(key, new Uint8Array(value))
    }
    for (const [store, keys] of added) {
      const sorted = this.sorted.get(store)
      if (!sorted) continue
      if (keys.length > INCREMENTAL_SORT_MAX) {
        this.sorted.delete(store)
        continue
      }
      for (const k of keys) sorted.splice(lowerBound(sorted, k), 0, k)
    }
    const bulkDelete = batch.dels.length > INCREMENTAL_SORT_MAX
    for (const { store, key } of batch.dels) {
      if (!this.stores.get(store)?.delete(key)) continue
      const sorted = this.sorted.get(store)
      if (!sorted) continue
      if (bulkDelete) {
        this.sorted.delete(store)
        continue
      }
      const i = lowerBound(sorted, key)
      if (sorted[i] === key) sorted.splice(i, 1)
      else this.sorted.delete(store)
    }
  }

  async close() {
    this.closed = true
  }

  private check() {
    if (this.closed) throw new Error('storage adapter is closed')
  }
}
