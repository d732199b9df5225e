/**
 * A Map that holds at most `max` entries: setting a new key past the bound drops the entry
 * set (or touched) longest ago. Per-peer state lives in these wherever a peer could be a
 * stranger, since peer ids (and account keys) cost nothing to mint.
 */
export class LruMap<K, V> extends Map<K, V> {
  constructor(readonly max: number) {
    super()
  }

  override set(key: K, value: V): this {
    if (super.has(key)) super.delete(key)
    super.set(key, value)
    while (this.size > this.max) super.delete(super.keys().next().value as K)
    return this
  }

  /** Marks an entry as just used, so it is evicted last. */
  touch(key: K): V | undefined {
    const v = super.get(key)
    if (v !== undefined || super.has(key)) this.set(key, v as V)
    return v
  }
}
