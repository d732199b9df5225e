import { SvcError } from '../core/errors.ts'
import { DEFAULT_MAILBOX_CAPACITY, MAX_MAILBOX_CAPACITY, MIN_MAILBOX_CAPACITY } from '../core/limits.ts'

/**
 * A subscriber's bounded mailbox (spec Limits: default 256, minimum 16), the one bounded queue
 * between a producer and a slow reader: live queries in the library, and every SSE stream's
 * backlog (server/sse.ts). `push` never grows
 * the queue past its capacity: when full it reports `overflow` and the mailbox stays
 * overflowed (sticky), so the stream is closed with reason `overflow` instead of buffering a
 * slow reader without bound. A ring buffer: O(1) push and shift.
 *
 * Typical use: the engine pushes one `changes` entry per write; the SSE writer waits with
 * `next()` (or drains with `drain()` to coalesce everything pending into one frame) and
 * closes with `overflow` once `overflowed` is true.
 */

export { DEFAULT_MAILBOX_CAPACITY, MAX_MAILBOX_CAPACITY, MIN_MAILBOX_CAPACITY }

export function checkMailboxCapacity(v: unknown): number {
  if (v === undefined || v === null) return DEFAULT_MAILBOX_CAPACITY
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < MIN_MAILBOX_CAPACITY || v > MAX_MAILBOX_CAPACITY) {
    throw new SvcError('request.invalid_field', `mailboxCapacity must be an integer from ${MIN_MAILBOX_CAPACITY} to ${MAX_MAILBOX_CAPACITY}`, { field: 'mailboxCapacity' })
  }
  return v
}

export type PushResult = 'ok' | 'overflow' | 'closed'

export class Mailbox<T> {
  readonly capacity: number
  /** Allocated on the first queued item: most streams never back up. */
  private ring: Array<T | undefined> | undefined
  private head = 0
  private count = 0
  private isOverflowed = false
  private isClosed = false
  private waiter: ((v: T | undefined) => void) | undefined

  constructor(capacity: number = DEFAULT_MAILBOX_CAPACITY) {
    this.capacity = checkMailboxCapacity(capacity)
  }

  get size(): number {
    return this.count
  }

  /** True once a push found the mailbox full; the stream must close with `overflow`. */
  get overflowed(): boolean {
    return this.isOverflowed
  }

  get closed(): boolean {
    return this.isClosed
  }

  /** Queues an item; `overflow` (and nothing queued) when full, `closed` after close(). */
  push(item: T): PushResult {
    if (this.isClosed) return 'closed'
    if (this.isOverflowed) return 'overflow'
    if (this.waiter) {
      const w = this.waiter
      this.waiter = undefined
      w(item)
      return 'ok'
    }
    if (this.count === this.capacity) {
      this.isOverflowed = true
      return 'overflow'
    }
    this.ring ??= new Array<T | undefined>(this.capacity)
    this.ring[(this.head + this.count) % this.capacity] = item
    this.count++
    return 'ok'
  }

  /** Oldest item, or undefined when empty. */
  shift(): T | undefined {
    if (this.count === 0) return undefined
    const ring = this.ring as Array<T | undefined>
    const item = ring[this.head]
    ring[this.head] = undefined
    this.head = (this.head + 1) % this.capacity
    this.count--
    return item
  }

  /** Drops everything queued (a stream that closes discards its backlog). */
  clear(): void {
    this.ring?.fill(undefined)
    this.head = 0
    this.count = 0
  }

  /** Everything queued, oldest first (for coalescing into one frame). */
  drain(): T[] {
    const out: T[] = []
    while (this.count > 0) out.push(this.shift() as T)
    return out
  }

  /**
   * The next item: at once when one is queued, otherwise when one is pushed. Resolves
   * undefined once the mailbox is closed (or overflowed) and empty. One waiter at a time.
   */
  next(): Promise<T | undefined> {
    if (this.count > 0) return Promise.resolve(this.shift())
    if (this.isClosed || this.isOverflowed) return Promise.resolve(undefined)
    if (this.waiter) return Promise.reject(new Error('Mailbox.next: already waiting'))
    return new Promise((resolve) => (this.waiter = resolve))
  }

  /** Stops accepting items; a pending next() resolves undefined. Queued items stay readable. */
  close(): void {
    this.isClosed = true
    const w = this.waiter
    this.waiter = undefined
    w?.(undefined)
  }
}
