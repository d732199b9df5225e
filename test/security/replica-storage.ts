import type { ScanOptions, StorageAdapter, WriteBatch } from '../../sync/storage/adapter.ts'

/**
 * A StorageAdapter wrapper for replica tests: scans of the changes store can be delayed (the
 * snapshot is taken when the scan starts, as a real adapter's would be) or can hide rows,
 * the way a slow or damaged IndexedDB would.
 */
export class TestStorage implements StorageAdapter {
  readonly name = 'test-wrapper'
  /** Delay (ms) of the next scan of the changes store; reset to 0 once used. */
  nextChangeScanDelay = 0
  /** Delay (ms) of the next single-key read of the records store; reset to 0 once used. */
  nextRecordGetDelay = 0
  /** Keys of the changes store that scans leave out. */
  readonly hiddenFromScans = new Set<string>()
  commits = 0

  constructor(private readonly inner: StorageAdapter) {}

  async get(store: string, key: string) {
    const v = await this.inner.get(store, key)
    const delay = store === 'records' ? this.nextRecordGetDelay : 0
    if (delay) {
      this.nextRecordGetDelay = 0
      await new Promise((r) => setTimeout(r, delay))
    }
    return v
  }
  getMany(store: string, keys: readonly string[]) {
    return this.inner.getMany(store, keys)
  }
  async scan(store: string, o?: ScanOptions) {
    const rows = await this.inner.scan(store, o)
    if (store !== 'changes') return rows
    const delay = this.nextChangeScanDelay
    this.nextChangeScanDelay = 0
    if (delay) await new Promise((r) => setTimeout(r, delay))
    return this.hiddenFromScans.size ? rows.filter(([k]) => !this.hiddenFromScans.has(k)) : rows
  }
  commit(b: WriteBatch) {
    this.commits++
    return this.inner.commit(b)
  }
  close() {
    return this.inner.close()
  }
}
