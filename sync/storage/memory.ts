import type { ScanOptions, StorageAdapter, WriteBatch } from './adapter.ts'
import { scanSorted, compareUtf8 } from './scan.ts'

export { compareUtf8 }

/** In-memory adapter: tests, the simulator, and browsers that opt out of persistence. */
export class MemoryStorageAdapter implements StorageAdapter {
  readonly name = 'memory'
  private readonly stores = new Map<string, Map<string, Uint8Array>>()
  private readonly sorted = new Map<string, string[]>()
  private closed = false

  private store(name: string): Map<string, Uint8Array> {
    let s = this.stores.get(name)
    if (!s) {
      s = new Map()
      this.stores.set(name, s)
    }
    return s
  }

  async get(store: string, key: string) {
    this.check()
    return this.stores.get(store)?.get(key)
  }

  async getMany(store: string, keys: readonly string[]) {
    this.check()
    const s = this.stores.get(store)
    return keys.map((k) => s?.get(k))
  }

  async scan(store: string, options: ScanOptions = {}) {
    this.check()
    const s = this.stores.get(store)
    if (!s) return []
    let keys = this.sorted.get(store)
    if (!keys) {
      keys = [...s.keys()].sort(compareUtf8)
      this.sorted.set(store, keys)
    }
    return scanSorted(keys, options).map((k): [string, Uint8Array] => [k, s.get(k)!])
  }

  async commit(batch: WriteBatch) {
    this.check()
    for (const { store, key, value } of batch.puts) {
      const s = this.store(store)
      if (!s.has(key)) this.sorted.delete(store)
      s.set(key, value)
    }
    for (const { store, key } of batch.dels) {
      if (this.stores.get(store)?.delete(key)) this.sorted.delete(store)
    }
  }

  async close() {
    this.closed = true
  }

  private check() {
    if (this.closed) throw new Error('storage adapter is closed')
  }
}

