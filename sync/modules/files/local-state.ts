import { decodeCanonical, encodeCanonical } from '../../core/encoding.ts'
import type { Storage } from './stores.ts'

/** Device-local facts about one file: never synced, kept in the account's storage. */
export interface LocalFileState {
  /** This device attached the file (its bytes started here). */
  origin?: boolean
  /** A peer (own device or member) confirmed it stores every block, or this device fetched them all from one. */
  durable?: boolean
  /** Who confirmed (identity), for info. */
  confirmedBy?: string
  /** Kept by pin: fetched in the background, never freed by `cache/free`. */
  pinned?: boolean
  /** Last download or attach, for LRU. */
  lastAccess?: number
  /** Fetch rounds that could not complete, and why the last one failed (status frames). */
  attempts?: number
  lastErr?: string
  /** The last fetch found no peer offering a missing block. */
  limited?: boolean
}

export const LOCAL_STORES = { files: 'file_local', orphans: 'file_orphans' } as const
const key = (spaceId: string, fileId: string) => `${spaceId}/${fileId}`

/** Per-file local state, read through a small cache (status and LRU read it often). */
export class LocalStates {
  private readonly cache = new Map<string, LocalFileState>()

  constructor(private readonly storage: Storage) {}

  async get(spaceId: string, fileId: string): Promise<LocalFileState> {
    const k = key(spaceId, fileId)
    const hit = this.cache.get(k)
    if (hit) return hit
    const raw = await this.storage.get(LOCAL_STORES.files, k)
    const st = raw ? decodeCanonical<LocalFileState>(raw) : {}
    if (this.cache.size > 50_000) this.cache.clear()
    this.cache.set(k, st)
    return st
  }

  async update(spaceId: string, fileId: string, patch: Partial<LocalFileState>): Promise<LocalFileState> {
    const next = { ...(await this.get(spaceId, fileId)), ...patch }
    for (const [k, v] of Object.entries(next)) if (v === undefined) delete (next as Record<string, unknown>)[k]
    this.cache.set(key(spaceId, fileId), next)
    await this.storage.commit({ puts: [{ store: LOCAL_STORES.files, key: key(spaceId, fileId), value: encodeCanonical(next) }], dels: [] })
    return next
  }

  async drop(spaceId: string, fileId: string): Promise<void> {
    this.cache.delete(key(spaceId, fileId))
    await this.storage.commit({ puts: [], dels: [{ store: LOCAL_STORES.files, key: key(spaceId, fileId) }] })
  }

  /** Every file with local state: `[spaceId, fileId, state]` (pins to resume, the sweep's pruning). */
  async all(): Promise<Array<[string, string, LocalFileState]>> {
    return (await this.storage.scan(LOCAL_STORES.files)).map(([k, v]) => {
      const i = k.indexOf('/')
      return [k.slice(0, i), k.slice(i + 1), decodeCanonical<LocalFileState>(v)]
    })
  }
}
