import { decodeCanonical, encodeCanonical } from '../../core/encoding.ts'
import { LOCAL_STORES } from './local-state.ts'
import type { FileRecord } from './record.ts'
import type { FilesService } from './service.ts'

/** Local ids of cached variants (never a block address: those are base58 without dots). */
export const variantId = (fileId: string, variant: string) => `variant.${fileId}.${variant}`
const isVariant = (id: string) => id.startsWith('variant.')
const fileOfVariant = (id: string) => id.split('.')[1]

/**
 * The local copy of files (spec core.md "Files cache", docs/files.md "Cache"): its size, LRU
 * `free`, and the sweep. Only local bytes move here: no record is written, and nothing that is
 * the only known copy of a live file is ever dropped.
 */
export class FileCache {
  constructor(private readonly files: FilesService) {}

  size(): Promise<number> {
    return this.files.store.size()
  }

  /** Drops the blocks and variants of one file's content (blocks shared with other files too: one root content). */
  async dropContent(spaceId: string, rec: FileRecord): Promise<number> {
    const ids = [...new Set(rec.blocks ?? [])]
    const variants = (await this.files.store.list(spaceId)).filter((b) => isVariant(b.id) && fileOfVariant(b.id) === rec.id).map((b) => b.id)
    return this.files.store.delete(spaceId, [...ids, ...variants])
  }

  /**
   * Frees at least `bytes` if it can: first blocks no live record references (deleted files,
   * aborted attaches), then whole files, least recently used first, skipping pinned files and
   * any file whose state is not durable (the only copy). Answers the bytes freed.
   */
  async free(bytes: number): Promise<number> {
    let freed = 0
    const candidates: Array<{ spaceId: string; rec: FileRecord; lastAccess: number }> = []
    for (const spaceId of [...this.files.spaceIds].sort()) {
      if (freed >= bytes) return freed
      if (!this.files.account.held(spaceId)) continue
      const { unreferenced, records } = await this.census(spaceId)
      freed += await this.files.store.delete(spaceId, unreferenced.slice(0, unreferenced.length))
      for (const rec of records) {
        if (rec.inline !== undefined) continue
        const st = await this.files.local.get(spaceId, rec.id)
        if (st.pinned) continue
        candidates.push({ spaceId, rec, lastAccess: st.lastAccess ?? 0 })
      }
    }
    candidates.sort((a, b) => a.lastAccess - b.lastAccess)
    for (const c of candidates) {
      if (freed >= bytes) break
      const info = await this.files.infoOf(c.spaceId, c.rec)
      if (info.state !== 'durable' || info.cachedBlocks === 0) continue
      freed += await this.dropContent(c.spaceId, c.rec)
      await this.files.announce(c.spaceId, c.rec.id)
    }
    return freed
  }

  /**
   * The sweep: forgets local state of files no longer live, marks blocks no live record
   * references and deletes those marked longer than the grace period ago, and drops partial
   * copies of unpinned files nobody read within the grace period.
   */
  async sweep(): Promise<void> {
    const now = this.files.account.env.now()
    for (const spaceId of [...this.files.spaceIds].sort()) {
      if (!this.files.account.held(spaceId)) continue
      const { unreferenced, records, referenced } = await this.census(spaceId)
      const live = new Set(records.map((r) => r.id))
      for (const [s, fileId] of await this.files.local.all()) if (s === spaceId && !live.has(fileId)) await this.files.local.drop(spaceId, fileId)
      const storage = this.files.account.storage
      const marks = await storage.getMany(
        LOCAL_STORES.orphans,
        unreferenced.map((id) => `${spaceId}/${id}`),
      )
      const expired: string[] = []
      const puts = []
      for (let i = 0; i < unreferenced.length; i++) {
        const since = marks[i] ? decodeCanonical<number>(marks[i]!) : undefined
        if (since === undefined) puts.push({ store: LOCAL_STORES.orphans, key: `${spaceId}/${unreferenced[i]}`, value: encodeCanonical(now) })
        else if (now - since >= this.files.graceMs) expired.push(unreferenced[i])
      }
      // A grace of zero deletes on first sight.
      if (this.files.graceMs <= 0) expired.push(...puts.splice(0).map((p) => p.key.slice(spaceId.length + 1)))
      // Marks of blocks referenced again (a re-attach of equal content) go.
      const stale = (await storage.scan(LOCAL_STORES.orphans, { prefix: `${spaceId}/` }))
        .map(([k]) => k)
        .filter((k) => referenced.has(k.slice(spaceId.length + 1)) || expired.includes(k.slice(spaceId.length + 1)))
      await this.files.store.delete(spaceId, expired)
      await storage.commit({ puts, dels: stale.map((key) => ({ store: LOCAL_STORES.orphans, key })) })
      for (const rec of records) {
        if (rec.inline !== undefined) continue
        const st = await this.files.local.get(spaceId, rec.id)
        if (st.pinned || st.origin || now - (st.lastAccess ?? 0) < this.files.graceMs) continue
        const info = await this.files.infoOf(spaceId, rec)
        if (info.cachedBlocks > 0 && !info.cached) await this.dropContent(spaceId, rec)
      }
    }
  }

  /** Live records of a space, the blocks they reference, and stored blocks nobody references. */
  private async census(spaceId: string): Promise<{ records: FileRecord[]; referenced: Set<string>; unreferenced: string[] }> {
    const records = await this.files.records(spaceId)
    const referenced = new Set<string>()
    const liveIds = new Set<string>()
    for (const r of records) {
      liveIds.add(r.id)
      for (const b of r.blocks ?? []) referenced.add(b)
    }
    const unreferenced = (await this.files.store.list(spaceId)).map((b) => b.id).filter((id) => (isVariant(id) ? !liveIds.has(fileOfVariant(id)) : !referenced.has(id)))
    return { records, referenced, unreferenced }
  }
}
