import { STORES, type WriteBatch } from '../../sync/storage/adapter.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import type { HubChange, HubStore } from './store/hub-store.ts'

/**
 * Where a kept space's keyless replica lives in a hub process: its heads, indexes and ACL in
 * memory, every change it commits written through to the hub's store (SQLite or PostgreSQL)
 * before the commit resolves. The store is the truth every hub process shares; the memory is
 * this process's view, rebuilt from the store when the space opens (KeptSpaces) and fed what
 * other processes append.
 */
export class WriteThroughStorage extends MemoryStorageAdapter {
  /** Changes that came from the store (hydration, another process's appends): not written back. */
  readonly fromStore = new Set<string>()
  /** Appends under way, for the hub's queue depths. */
  pending = 0

  constructor(
    private readonly spaceId: string,
    private readonly store: HubStore,
    private readonly onAppended: (count: number, bytes: number) => void,
  ) {
    super()
  }

  override async commit(batch: WriteBatch): Promise<void> {
    const out: HubChange[] = []
    let bytes = 0
    for (const p of batch.puts) {
      if (p.store !== STORES.changes) continue
      // Keys are <space>/<tree>/<change> (sync/replica/storage-keys.ts); ids are base58, no '/'.
      const [, treeId, id] = p.key.split('/')
      if (this.fromStore.has(id)) continue
      out.push({ id, treeId, raw: p.value })
      bytes += p.value.byteLength
    }
    if (out.length) {
      this.pending++
      try {
        const added = await this.store.appendChanges(this.spaceId, out)
        if (added) this.onAppended(added, bytes)
      } finally {
        this.pending--
      }
    }
    await super.commit(batch)
  }
}
