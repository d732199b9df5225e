import type { StorageAdapter } from './adapter.ts'

/**
 * Content-addressed blocks of one account (files' encrypted blocks), kept per space: a block is
 * served only under the space it was stored for, so a peer allowed into one space cannot pull
 * another space's blocks by guessing or remembering an id. Writers check the address before
 * `put`; the store keeps bytes, not trust.
 */
export interface BlockStore {
  /** Keeps its own copy: the caller may change or reuse `bytes` once the promise settles. */
  put(spaceId: string, blocks: ReadonlyArray<{ id: string; bytes: Uint8Array }>): Promise<void>
  /** The caller's own bytes (never a view of what the store keeps): it may change them or hand them off. */
  get(spaceId: string, id: string): Promise<Uint8Array | undefined>
  /** For each id, whether the block is stored. */
  has(spaceId: string, ids: readonly string[]): Promise<boolean[]>
  /** Deletes the blocks; absent ids are ignored. Answers the bytes freed. */
  delete(spaceId: string, ids: readonly string[]): Promise<number>
  /** Every stored block of a space with its size, in id order. */
  list(spaceId: string): Promise<Array<{ id: string; size: number }>>
  /** Bytes stored across every space. */
  size(): Promise<number>
}

export const BLOCK_STORES = { bytes: 'file_blocks', sizes: 'file_block_sizes' } as const

const key = (spaceId: string, id: string) => `${spaceId}/${id}`
const sizeBytes = (n: number) => {
  const b = new Uint8Array(4)
  new DataView(b.buffer).setUint32(0, n)
  return b
}
const sizeOf = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(0)

/**
 * A BlockStore on any StorageAdapter (memory, SQLite, IndexedDB): block bytes in one store and
 * their sizes in another, written in one batch, so size and listing scan 4-byte values instead
 * of the blocks. The adapter's atomic batch keeps both in step across a crash.
 */
export class KvBlockStore implements BlockStore {
  constructor(private readonly storage: StorageAdapter) {}

  async put(spaceId: string, blocks: ReadonlyArray<{ id: string; bytes: Uint8Array }>) {
    if (blocks.length === 0) return
    const puts = []
    for (const b of blocks) {
      puts.push({ store: BLOCK_STORES.bytes, key: key(spaceId, b.id), value: b.bytes })
      puts.push({ store: BLOCK_STORES.sizes, key: key(spaceId, b.id), value: sizeBytes(b.bytes.length) })
    }
    await this.storage.commit({ puts, dels: [] })
  }

  get(spaceId: string, id: string) {
    return this.storage.get(BLOCK_STORES.bytes, key(spaceId, id))
  }

  async has(spaceId: string, ids: readonly string[]) {
    const sizes = await this.storage.getMany(
      BLOCK_STORES.sizes,
      ids.map((id) => key(spaceId, id)),
    )
    return sizes.map((s) => s !== undefined)
  }

  async delete(spaceId: string, ids: readonly string[]) {
    if (ids.length === 0) return 0
    const keys = ids.map((id) => key(spaceId, id))
    const sizes = await this.storage.getMany(BLOCK_STORES.sizes, keys)
    let freed = 0
    const dels = []
    for (let i = 0; i < keys.length; i++) {
      const s = sizes[i]
      if (!s) continue
      freed += sizeOf(s)
      dels.push({ store: BLOCK_STORES.bytes, key: keys[i] }, { store: BLOCK_STORES.sizes, key: keys[i] })
    }
    if (dels.length) await this.storage.commit({ puts: [], dels })
    return freed
  }

  async list(spaceId: string) {
    const prefix = `${spaceId}/`
    return (await this.storage.scan(BLOCK_STORES.sizes, { prefix })).map(([k, v]) => ({ id: k.slice(prefix.length), size: sizeOf(v) }))
  }

  async size() {
    let total = 0
    for (const [, v] of await this.storage.scan(BLOCK_STORES.sizes)) total += sizeOf(v)
    return total
  }
}
