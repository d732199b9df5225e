import { sha256 } from '../sync/crypto/hash.ts'
import { toHex, utf8 } from '../sync/core/encoding.ts'
import type { Timer } from '../sync/protocol/sync-driver.ts'

interface Ev {
  time: number
  seq: number
  label: string
  fn: () => void | Promise<void>
  cancelled: boolean
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

const before = (x: Ev, y: Ev) => x.time < y.time || (x.time === y.time && x.seq < y.seq)

/**
 * The one event heap of a simulated run, ordered by virtual time and then by insertion, so
 * equal times keep a fixed order. Each event runs to completion (its promise is awaited)
 * before the next starts: replicas, sessions and storage never interleave, and a seed replays
 * exactly. Every executed event, and anything else passed to `record`, feeds the trace hash.
 */
export class Scheduler {
  now = 0
  private readonly heap: Ev[] = []
  private seq = 0
  private readonly hasher = sha256.create()
  /** Last trace lines, kept for failure reports. */
  readonly tail: string[] = []
  executed = 0

  constructor(private readonly tailSize = 0) {}

  at(time: number, label: string, fn: () => void | Promise<void>): () => void {
    const ev: Ev = { time: Math.max(time, this.now), seq: this.seq++, label, fn, cancelled: false }
    this.push(ev)
    return () => {
      ev.cancelled = true
    }
  }

  after(ms: number, label: string, fn: () => void | Promise<void>): () => void {
    return this.at(this.now + ms, label, fn)
  }

  record(line: string) {
    this.hasher.update(utf8(line + '\n'))
    if (this.tailSize) {
      this.tail.push(line)
      if (this.tail.length > this.tailSize) this.tail.shift()
    }
  }

  traceHash(): string {
    return toHex(this.hasher.clone().digest())
  }

  /** Runs events up to and including virtual time `until` (or until none is left). */
  async run(until = Infinity): Promise<void> {
    while (this.heap.length) {
      const top = this.heap[0]
      if (top.time > until) break
      this.pop()
      if (top.cancelled) continue
      this.now = top.time
      this.executed++
      this.record(`${top.time} ${top.label}`)
      await top.fn()
      // Work an event set going without awaiting it (a sync scheduler's rounds) finishes what it
      // can do now before the next event starts, whatever the crypto provider awaits in between.
      await settle()
    }
    if (until !== Infinity && this.now < until) this.now = until
  }

  /** True when no live event is queued. */
  idle(): boolean {
    return this.heap.every((e) => e.cancelled)
  }

  /** Timers on virtual time, for sync drivers and schedulers. Nothing else runs between two
   *  events, so yielding to it lets nothing in: it only resumes after pending microtasks. */
  timer(label: string): Timer {
    return { after: (ms, fn) => this.after(ms, label, fn), yield: () => Promise.resolve() }
  }

  private push(ev: Ev) {
    const h = this.heap
    h.push(ev)
    let i = h.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (!before(h[i], h[p])) break
      ;[h[i], h[p]] = [h[p], h[i]]
      i = p
    }
  }

  private pop(): Ev {
    const h = this.heap
    const top = h[0]
    const last = h.pop()!
    if (h.length) {
      h[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < h.length && before(h[l], h[m])) m = l
        if (r < h.length && before(h[r], h[m])) m = r
        if (m === i) break
        ;[h[i], h[m]] = [h[m], h[i]]
        i = m
      }
    }
    return top
  }
}
