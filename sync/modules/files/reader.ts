import { SvcError } from '../../core/errors.ts'
import { errField, silentLogger, type Logger } from '../../core/log.ts'
import type { BlockCrypto } from './block-crypto.ts'
import type { BlockStore } from './stores.ts'
import type { BlockSource } from './network.ts'
import { blockLength, type FileRecord } from './record.ts'

/** Block ids handed to the network at once (it splits them into wants and pipelines them). */
const FETCH_BATCH = 64
/** Reads of at most this many blocks open them on the calling thread (BlockReader `near`). */
const SHORT_READ_BLOCKS = 2
/** Blocks per window a download fetches ahead of the consumer, in the background. */
const READ_AHEAD = 16
/**
 * Windows in flight at once: the next one is asked for while the one before is still
 * arriving, so the transfer does not stall at each window's end for a round trip.
 */
const WINDOWS_AHEAD = 2
/**
 * Blocks a download just fetched, kept in memory for it (the windows in flight and the one
 * being read), so a transfer does not read back from disk what it just wrote. Oldest out
 * first; a download drops what it did not read when it ends, and other fetches (a pin) keep
 * nothing.
 */
const FRESH_MAX = (WINDOWS_AHEAD + 1) * READ_AHEAD

/**
 * Local blocks, and missing ones fetched from peers block by block: every fetched block is
 * checked against its address before it is stored, and concurrent wants of one block share one
 * fetch. What a fetch stored stays stored, so an interrupted transfer resumes where it stopped.
 */
export class BlockReader {
  private readonly inflight = new Map<string, Promise<void>>()
  private readonly fresh = new Map<string, Uint8Array>()
  source: BlockSource | undefined

  /**
   * `crypto` does the bulk (the daemon's thread); `near`, where given, opens the blocks of a
   * short read (SHORT_READ_BLOCKS or fewer) on the calling thread: for a Range of a block or
   * two, a round trip to another thread costs more than the opening it saves.
   */
  constructor(
    private readonly store: BlockStore,
    private readonly crypto: BlockCrypto,
    private readonly near: BlockCrypto = crypto,
    private readonly log: Logger = silentLogger,
  ) {}

  /** Which of the file's blocks are stored here. */
  async present(spaceId: string, rec: FileRecord): Promise<boolean[]> {
    return rec.blocks ? this.store.has(spaceId, rec.blocks) : []
  }

  /**
   * Makes blocks `[from, to]` of the file local, fetching what is missing. 409
   * `file.not_available` when no peer delivers one (nothing is half-stored: each block is whole
   * or absent). `keep`: a download will read them soon (FRESH_MAX).
   */
  async ensure(spaceId: string, rec: FileRecord, from: number, to: number, keep = false): Promise<void> {
    const ids = rec.blocks!.slice(from, to + 1)
    const have = await this.store.has(spaceId, ids)
    const missing = [...new Set(ids.filter((_, i) => !have[i]))]
    for (let i = 0; i < missing.length; i += FETCH_BATCH) await this.fetch(spaceId, missing.slice(i, i + FETCH_BATCH), keep)
  }

  private async fetch(spaceId: string, ids: string[], keep: boolean): Promise<void> {
    const waits: Promise<void>[] = []
    const mine: string[] = []
    for (const id of ids) {
      const w = this.inflight.get(`${spaceId}/${id}`)
      if (w) waits.push(w)
      else mine.push(id)
    }
    if (mine.length) {
      const run = this.fetchNow(spaceId, mine, keep)
      for (const id of mine) this.inflight.set(`${spaceId}/${id}`, run)
      waits.push(run)
      run
        .finally(() => {
          for (const id of mine) if (this.inflight.get(`${spaceId}/${id}`) === run) this.inflight.delete(`${spaceId}/${id}`)
          // Its failure reaches every caller through `waits`; this copy is only noted.
        })
        .catch((err: unknown) => this.log.debug('fetching blocks failed', { spaceId, err: errField(err) }))
    }
    await Promise.all(waits)
  }

  private async fetchNow(spaceId: string, ids: string[], keep: boolean): Promise<void> {
    const source = this.source
    if (!source) throw new SvcError('file.not_available', 'blocks of this file are not on this device and no peer is reachable', { missing: ids.length })
    const missing = await source.fetch(spaceId, ids, async (id, received) => {
      const bytes = ids.includes(id) ? await this.crypto.isBlock(id, received) : undefined
      if (!bytes) return false
      await this.store.put(spaceId, [{ id, bytes }])
      if (keep) {
        this.fresh.set(`${spaceId}/${id}`, bytes)
        if (this.fresh.size > FRESH_MAX) this.fresh.delete(this.fresh.keys().next().value!)
      }
      return true
    })
    if (missing.length) throw new SvcError('file.not_available', 'no reachable peer holds some blocks of this file; retry later', { missing: missing.length })
  }

  /** The plaintext of block `i` (which must be local). */
  async plain(spaceId: string, rec: FileRecord, i: number, crypto = this.crypto): Promise<Uint8Array> {
    const key = `${spaceId}/${rec.blocks![i]}`
    const kept = this.fresh.get(key)
    if (kept) this.fresh.delete(key)
    const bytes = kept ?? (await this.store.get(spaceId, rec.blocks![i]))
    if (!bytes) throw new SvcError('file.not_available', 'a block of this file went missing; retry', { block: i })
    let p: Uint8Array
    try {
      // Ours to give: kept bytes (the store holds its own copy) and a store's answer alike (BlockStore.get).
      p = await crypto.open(rec.keys![i], bytes, true)
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
    const opener = last - first < SHORT_READ_BLOCKS ? this.near : this.crypto
    // The first blocks before the answer starts (a failure is still an error response); the
    // rest window by window in the background, WINDOWS_AHEAD of them ahead of the consumer.
    let ready = Math.min(last, first + 3)
    await this.ensure(spaceId, rec, first, ready, true)
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the async generator below reads the reader's state; a generator function has its own this
    const self = this
    let asked = ready
    const ahead: Array<{ to: number; done: Promise<void> }> = []
    const askAhead = () => {
      while (ahead.length < WINDOWS_AHEAD && asked < last) {
        const to = Math.min(last, asked + READ_AHEAD)
        const done = self.ensure(spaceId, rec, asked + 1, to, true)
        // Awaited when the read gets there; a reader gone before then never sees it.
        done.catch((err: unknown) => self.log.debug('fetching blocks ahead of a read failed', { spaceId, fileId: rec.id, err: errField(err) }))
        ahead.push({ to, done })
        asked = to
      }
    }
    return (async function* () {
      try {
        askAhead()
        for (let i = first; i <= last; i++) {
          if (i > ready) {
            const w = ahead.shift()!
            await w.done
            ready = w.to
            askAhead()
          }
          const p = await self.plain(spaceId, rec, i, opener)
          const lo = i === first ? start - i * bs : 0
          const hi = i === last ? end - i * bs + 1 : p.length
          yield p.subarray(lo, hi)
        }
      } finally {
        // Ended or cut off (the client went away): what it fetched and did not read goes.
        for (let i = first; i <= last; i++) self.fresh.delete(`${spaceId}/${rec.blocks![i]}`)
      }
    })()
  }
}
