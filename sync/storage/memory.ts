import type { ScanOptions, StorageAdapter, WriteBatch } from './adapter.ts'
import { scanSorted } from './scan.ts'

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

/** Compares strings by UTF-8 byte order (the order SQLite and the spec of StorageAdapter use). */
export function compareUtf8(a: string, b: string): number {
  // UTF-16 code unit order equals UTF-8 byte order except for surrogates vs U+E000..U+FFFF.
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    if (x >= 0xd800 && x <= 0xdfff) x += 0x2000
    else if (x >= 0xe000) x -= 0x800
    if (y >= 0xd800 && y <= 0xdfff) y += 0x2000
    else if (y >= 0xe000) y -= 0x800
    return x - y
  }
  return a.length - b.length
}
