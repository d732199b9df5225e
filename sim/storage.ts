import type { ScanOptions, StorageAdapter, WriteBatch } from '../sync/storage/adapter.ts'
import type { MemoryStorageAdapter } from '../sync/storage/memory.ts'

/** Thrown by a crashed peer's storage: the process is gone, nothing more is written. */
export class SimCrash extends Error {
  constructor(readonly peer: string) {
    super(`simulated crash of ${peer}`)
    this.name = 'SimCrash'
  }
}

/**
 * One incarnation's view of a peer's durable storage. The data (a MemoryStorageAdapter) outlives
 * the incarnation; this wrapper dies with it. `armCrash(n)` makes the n-th commit from now the
 * moment the process dies: that batch is never applied (a batch is atomic, so it is all or
 * nothing), the write or ingest that issued it is never acknowledged, and every later call
 * fails. A restarted peer opens a new wrapper on the same data and reloads from it.
 */
export class CrashableStorage implements StorageAdapter {
  readonly name = 'sim'
  crashed = false
  private crashIn = 0
  commits = 0

  constructor(
    private readonly inner: MemoryStorageAdapter,
    private readonly peer: string,
    private readonly onCrash: () => void,
  ) {}

  /** The n-th commit from now (n >= 1) crashes the peer instead of applying. */
  armCrash(n: number) {
    this.crashIn = n
  }

  /** Crash now (between two events): nothing in flight, the process just stops. */
  crashNow() {
    if (this.crashed) return
    this.crashed = true
    this.onCrash()
  }

  private check() {
    if (this.crashed) throw new SimCrash(this.peer)
  }

  async get(store: string, key: string) {
    this.check()
    return this.inner.get(store, key)
  }
  async getMany(store: string, keys: readonly string[]) {
    this.check()
    return this.inner.getMany(store, keys)
  }
  async scan(store: string, options?: ScanOptions) {
    this.check()
    return this.inner.scan(store, options)
  }
  async commit(batch: WriteBatch) {
    this.check()
    if (this.crashIn > 0 && --this.crashIn === 0) {
      this.crashNow()
      throw new SimCrash(this.peer)
    }
    this.commits++
    await this.inner.commit(batch)
  }
  async close() {
    this.crashed = true
  }
}
