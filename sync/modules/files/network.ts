/**
 * What the files service needs from the network (sync/p2p/block-exchange.ts implements it over
 * the block exchange protocol, in the daemon and in a page): blocks by address from peers that
 * may read the space, and a peer's word that it stores a file's every block. Absent (no P2P, a
 * page whose sync has not started), a missing block is 409 `file.not_available` and nothing
 * turns durable.
 */
export interface BlockSource {
  /**
   * Asks connected peers that may read the space for these blocks, in order; hands each one
   * received to `onBlock` (which checks its address before storing) and gives it the bytes:
   * they are no view of anything the source still uses. Resolves with the ids no peer delivered.
   */
  fetch(spaceId: string, ids: readonly string[], onBlock: (id: string, bytes: Uint8Array) => Promise<boolean>): Promise<string[]>
  /** The identity of a connected peer that says it stores every one of these blocks, if any. */
  confirm(spaceId: string, ids: readonly string[]): Promise<string | undefined>
  /** Counters of the exchange since start (`GET /v1/files/exchange`). */
  stats?(): Record<string, unknown>
}

/** A status frame of `{S}/files/subscribe` (spec core.md Files). */
export interface FileStatusFrame {
  fileId: string
  objectId: string
  state: FileState
  cached: boolean
  attempts?: number
  lastErr?: string
}

export type FileState = 'durable' | 'inflight' | 'limited'
