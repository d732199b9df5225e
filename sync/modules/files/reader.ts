import { SvcError } from '../../core/errors.ts'
import type { CryptoProvider } from '../../crypto/provider.ts'
import { sha256 } from '../../crypto/hash.ts'
import type { BlockStore } from './stores.ts'
import { isBlock, openBlock } from './blocks.ts'
import type { BlockSource } from './network.ts'
import { blockLength, type FileRecord } from './record.ts'

/** Block ids handed to the network at once (it splits them into wants and pipelines them). */
const FETCH_BATCH = 64
/** Blocks a download fetches ahead of the consumer, in the background, window by window. */
const READ_AHEAD = 32

/**
 * Local blocks, and missing ones fetched from peers block by block: every fetched block is
 * checked against its address before it is stored, and concurrent wants of one block share one
 * fetch. What a fetch stored stays stored, so an interrupted transfer resumes where it stopped.
 */
export class BlockReader {
  private readonly inflight = new Map<string, Promise<void>>()
  source: BlockSource | undefined

  constructor(
    private readonly store: BlockStore,
    private readonly crypto: CryptoProvider,
  ) {}

  /** Which of the file's blocks are stored here. */
  async present(spaceId: string, rec: FileRecord): Promise<boolean[]> {
    return rec.blocks ? this.store.has(spaceId, rec.blocks) : []
  }

  /**
   * Makes blocks `[from, to]` of the file local, fetching what is missing. 409
   * `file.not_available` when no peer delivers one (nothing is half-stored: each block is whole
   * or absent).
   */
  async ensure(spaceId: string, rec: FileRecord, from: number, to: number): Promise<void> {
    const ids = rec.blocks!.slice(from, to + 1)
    const have = await this.store.has(spaceId, ids)
    const missing = [...new Set(ids.filter((_, i) => !have[i]))]
    for (let i = 0; i < missing.length; i += FETCH_BATCH) await this.fetch(spaceId, missing.slice(i, i + FETCH_BATCH))
  }

  private async fetch(spaceId: string, ids: string[]): Promise<void> {
    const waits: Promise<void>[] = []
    const mine: string[] = []
    for (const id of ids) {
      const w = this.inflight.get(`${spaceId}/${id}`)
      if (w) waits.push(w)
      else mine.push(id)
    }
    if (mine.length) {
      const run = this.fetchNow(spaceId, mine)
      for (const id of mine) this.inflight.set(`${spaceId}/${id}`, run)
      waits.push(run)
      run.finally(() => {
        for (const id of mine) if (this.inflight.get(`${spaceId}/${id}`) === run) this.inflight.delete(`${spaceId}/${id}`)
      }).catch(() => undefined)
    }
    await Promise.all(waits)
  }

  private async fetchNow(spaceId: string, ids: string[]): Promise<void> {
    const source = this.source
    if (!source) throw new SvcError('file.not_available', 'blocks of this file are not on this device and no peer is reachable', { missing: ids.length })
    const hash = this.crypto.sha256 ?? sha256
    const missing = await source.fetch(spaceId, ids, async (id, bytes) => {
      if (!ids.includes(id) || !isBlock(id, bytes, hash)) return false
      await this.store.put(spaceId, [{ id, bytes }])
      return true
    })
    if (missing.length) throw new SvcError('file.not_available', 'no reachable peer holds some blocks of this file; retry later', { missing: missing.length })
  }

  /** The plaintext of block `i` (which must be local). */
  async plain(spaceId: string, rec: FileRecord, i: number): Promise<Uint8Array> {
    const bytes = await this.store.get(spaceId, rec.blocks![i])
    if (!bytes) throw new SvcError('file.not_available', 'a block of this file went missing; retry', { block: i })
    let p: Uint8Array
    try {
      p = openBlock(rec.keys![i], bytes, this.crypto.aead)
    } catch {
      // A member wrote a record whose keys do not open its blocks: the file is unreadable.
      throw new SvcError('file.not_available', 'a block of this file does not open with its key', { block: i })
    }
    if (p.length !== blockLength(rec, i)) throw new SvcError('file.not_available', 'a block of this file has the wrong length', { block: i })
    return p
  }

  /**
   * Bytes `[start, end]` (inclusive) of the file. The first block is made local before this
   * resolves (so a failure is still an error response); later ones as the consumer reads.
   */
  async range(spaceId: string, rec: FileRecord, start: number, end: number): Promise<AsyncIterable<Uint8Array>> {
    if (rec.inline) {
      const bytes = rec.inline.subarray(start, end + 1)
      return (async function* () {
        if (bytes.length) yield bytes
      })()
    }
    if (rec.size === 0 || end < start) return (async function* () {})()
    const bs = rec.blockSize!
    const first = Math.floor(start / bs)
    const last = Math.floor(end / bs)
    // The first blocks before the answer starts (a failure is still an error response); the
    // rest window by window in the background while the consumer reads the previous window.
    let ready = Math.min(last, first + 3)
    await this.ensure(spaceId, rec, first, ready)
    const self = this
    const window = (from: number) => {
      const p = self.ensure(spaceId, rec, from, Math.min(last, from + READ_AHEAD - 1))
      p.catch(() => undefined)
      return p
    }
    return (async function* () {
      let next = ready < last ? window(ready + 1) : undefined
      for (let i = first; i <= last; i++) {
        if (i > ready) {
          await next
          ready = Math.min(last, ready + READ_AHEAD)
          next = ready < last ? window(ready + 1) : undefined
        }
        const p = await self.plain(spaceId, rec, i)
        const lo = i === first ? start - i * bs : 0
        const hi = i === last ? end - i * bs + 1 : p.length
        yield p.subarray(lo, hi)
      }
    })()
  }
}
