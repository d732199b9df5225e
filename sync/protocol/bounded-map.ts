/**
 * A Map that keeps at most `max` entries, evicting the least recently used (touched by `get`
 * or `set`). Per-peer state keyed by peer ids a stranger mints for the price of a connection
 * lives in one of these.
 */
export class BoundedMap<K, V> {
  private readonly m = new Map<K, V>()

  constructor(
    private readonly max: number,
    private readonly onEvict?: (k: K, v: V) => void,
  ) {}

  get size() {
    return this.m.size
  }

  get(k: K): V | undefined {
    const v = this.m.get(k)
    if (v !== undefined) {
      this.m.delete(k)
      this.m.set(k, v)
    }
    return v
  }

  /** Without touching recency. */
  peek(k: K): V | undefined {
    return this.m.get(k)
  }

  has(k: K): boolean {
    return this.m.has(k)
  }

  set(k: K, v: V): this {
    this.m.delete(k)
    this.m.set(k, v)
    while (this.m.size > this.max) {
      const [oldK, oldV] = this.m.entries().next().value as [K, V]
      this.m.delete(oldK)
      this.onEvict?.(oldK, oldV)
    }
    return this
  }

  delete(k: K): boolean {
    return this.m.delete(k)
  }

  clear() {
    this.m.clear()
  }

  keys() {
    return this.m.keys()
  }

  values() {
    return this.m.values()
  }

  entries() {
    return this.m.entries()
  }

  [Symbol.iterator]() {
    return this.m[Symbol.iterator]()
  }
}
