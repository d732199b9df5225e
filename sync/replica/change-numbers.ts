import { SvcError } from '../core/errors.ts'
import { STORES, type StorageAdapter, type WriteBatch } from '../storage/adapter.ts'
import type { ChangeNumbering } from './record-codec.ts'
import { changeNumKey, changeNumPrefix } from './storage-keys.ts'

/**
 * Short local numbers for change ids in stored records (record-codec.ts). A stored record names
 * the changes its stamps come from (created, modified, each op of its live log): a 44-character
 * id each time made most of a small object's row. Each space of this device numbers the changes
 * its records name, 0, 1, 2..., as it first encodes them, and keeps the table number -> id in
 * storage, put in the same atomic batch as the first record that names the number.
 *
 * The table is cut into chunks of CHUNK consecutive numbers (`changeNums <space>/<chunk>`, the
 * chunk index in base 36, fixed width, so the last chunk is the last key): a batch that numbers
 * a thousand changes puts a few chunks, not a thousand rows (bench/core.ts's apply stage writes a
 * record and a change per change; one more row each cost a measurable share of it). Only the
 * last chunk is ever rewritten, while it fills.
 *
 * The numbers are this device's own: they never enter a change, a digest or anything sent
 * (decoding a record gives back the ids, and everything above the codec sees only ids). A number
 * names one change for good; a change may get a second number when its first one has left the
 * in-memory map (below) and a record naming it is written again (a tree re-derived after a
 * restart): both name the same id, so either decodes right.
 *
 * In memory: a bounded map both ways of the numbers met lately (assigned, or read from storage
 * to decode a record), and the chunks numbered into since the last commit. Decoding a record
 * whose numbers are not in memory reads their chunks first (`fetch`, one `getMany`); encoding
 * never reads: an id it does not find gets a new number.
 */
export class ChangeNumbers {
  private readonly ids = new Map<number, string>()
  private readonly nums = new Map<string, number>()
  /** Chunks numbered into and not stored yet, by index: put into every batch until one commits. */
  private readonly dirty = new Map<number, string[]>()
  /** The ids of the last chunk so far. */
  private tail: string[] = []
  private next = 0

  constructor(
    private readonly spaceId: string,
    private readonly storage: StorageAdapter,
    /** Entries kept in memory each way (the oldest quarter goes past it). */
    private readonly max: number,
  ) {}

  /** Reads the last chunk, where numbering goes on (once, when the replica opens). */
  async load(): Promise<void> {
    const prefix = changeNumPrefix(this.spaceId)
    const [last] = await this.storage.scan(STORES.changeNums, { prefix, reverse: true, limit: 1 })
    if (!last) return
    const index = parseInt(last[0].slice(prefix.length), 36)
    const ids = idsOf(last[1])
    this.tail = ids.length < CHUNK ? ids : []
    this.next = index * CHUNK + ids.length
  }

  /** The number of `changeId`, assigned now if it has none in memory. Only inside the serial queue. */
  numOf(changeId: string): number {
    const known = this.nums.get(changeId)
    if (known !== undefined) return known
    const n = this.next++
    if (n % CHUNK === 0) this.tail = []
    this.tail.push(changeId)
    this.dirty.set(Math.floor(n / CHUNK), this.tail)
    this.remember(n, changeId)
    return n
  }

  /** The id numbered `n`, if in memory (`fetch` brings it there). */
  idOf(n: number): string {
    const id = this.ids.get(n)
    if (id === undefined) throw unknownNumber(n)
    return id
  }

  /**
   * The ids of `numbers`, reading the chunks memory lacks from storage (one read). The answer
   * holds every one of them, whatever the bound on memory drops meanwhile.
   */
  async fetch(numbers: readonly number[]): Promise<Pick<ChangeNumbering, 'idOf'>> {
    const found = new Map<number, string>()
    let missing: Set<number> | undefined
    for (const n of numbers) {
      if (found.has(n)) continue
      const id = this.ids.get(n) ?? this.dirty.get(Math.floor(n / CHUNK))?.[n % CHUNK]
      if (id === undefined) (missing ??= new Set()).add(Math.floor(n / CHUNK))
      else found.set(n, id)
    }
    if (missing) {
      const chunks = [...missing]
      const raws = await this.storage.getMany(
        STORES.changeNums,
        chunks.map((c) => changeNumKey(this.spaceId, c)),
      )
      for (let k = 0; k < chunks.length; k++) {
        const raw = raws[k]
        if (!raw) continue
        const ids = idsOf(raw)
        for (let i = 0; i < ids.length; i++) {
          const n = chunks[k] * CHUNK + i
          found.set(n, ids[i])
          if (!this.ids.has(n)) this.remember(n, ids[i])
        }
      }
    }
    return {
      idOf: (n) => {
        const id = found.get(n)
        if (id === undefined) throw unknownNumber(n)
        return id
      },
    }
  }

  /**
   * Puts the chunks numbered into since the last commit into `batch`; pass what it returns to
   * `stored` once the batch has committed.
   */
  flushInto(batch: WriteBatch): NumbersFlushed | undefined {
    if (this.dirty.size === 0) return undefined
    const flushed: NumbersFlushed = []
    for (const [index, ids] of this.dirty) {
      batch.puts.push({ store: STORES.changeNums, key: changeNumKey(this.spaceId, index), value: enc.encode(ids.join('\n')) })
      flushed.push([index, ids.length])
    }
    return flushed
  }

  /** The batch `flushInto` filled has committed: its chunks are stored (as far as they went then). */
  stored(flushed: NumbersFlushed | undefined) {
    for (const [index, length] of flushed ?? []) if (this.dirty.get(index)?.length === length) this.dirty.delete(index)
  }

  /** The next number `numOf` would hand out. */
  get nextFree(): number {
    return this.next
  }

  /** Entries in memory (each way), for tests and memory reports. */
  get size(): number {
    return this.ids.size
  }

  private remember(n: number, id: string) {
    this.ids.set(n, id)
    this.nums.set(id, n)
    if (this.ids.size <= this.max) return
    // The oldest quarter goes (insertion order); numbers not stored yet stay in `dirty`.
    let drop = this.ids.size - Math.floor((this.max * 3) / 4)
    for (const [k, v] of this.ids) {
      if (drop-- <= 0) break
      this.ids.delete(k)
      if (this.nums.get(v) === k) this.nums.delete(v)
    }
  }
}

/** Consecutive numbers per stored chunk: at most about 1.4 KB of ids, rewritten while it fills. */
export const CHUNK = 32

/** What one `flushInto` put into a batch: each chunk's index and how many ids it held. */
export type NumbersFlushed = Array<[number, number]>

const idsOf = (raw: Uint8Array): string[] => (raw.byteLength ? dec.decode(raw).split('\n') : [])

const unknownNumber = (n: number) => new SvcError('internal', 'a stored record names a change number this space does not hold', { number: n })

/** Every number stored for `spaceId`, by number (tests, benchmarks). */
export async function storedChangeNumbers(storage: StorageAdapter, spaceId: string): Promise<Map<number, string>> {
  const out = new Map<number, string>()
  const prefix = changeNumPrefix(spaceId)
  for (const [k, v] of await storage.scan(STORES.changeNums, { prefix })) {
    const index = parseInt(k.slice(prefix.length), 36)
    idsOf(v).forEach((id, i) => out.set(index * CHUNK + i, id))
  }
  return out
}

const enc = new TextEncoder()
const dec = new TextDecoder()
