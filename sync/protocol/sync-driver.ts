import { SerialQueue } from '../core/serial-queue.ts'
import { PEER_LIMITS } from './limits.ts'
import type { ExchangeCost, ExchangeEnd, Outgoing, SyncSession } from './session.ts'
import { TransportError, type Transport } from './transport.ts'

/** Timers, injected: the daemon passes real ones, the simulator virtual ones. */
export interface Timer {
  /** Calls `fn` once after `ms`; returns a function that cancels it. */
  after(ms: number, fn: () => void): () => void
  /**
   * Lets the event loop run (pending I/O, other work) before the driver handles more messages:
   * the daemon yields a macrotask; the simulator, whose events run one at a time, yields
   * nothing, so no real timer enters a simulated run.
   */
  yield(): Promise<void>
}

export type RoundOutcome = ExchangeEnd['outcome'] | 'timeout' | 'unauthenticated' | 'unknown_space' | 'busy' | 'closed' | 'denied'

/** One sync round between this peer and one remote about one space. */
export interface RoundResult extends ExchangeCost {
  ok: boolean
  outcome: RoundOutcome
  /** The peer's error code when outcome is `error`. */
  error?: string
}

export interface DriverOptions {
  transport: Transport
  session: SyncSession
  timer: Timer
  /** A round not finished after this long is abandoned (default 10 s). */
  timeoutMs?: number
}

const empty = (outcome: RoundOutcome): RoundResult => ({
  ok: false,
  outcome,
  roundTrips: 0,
  messagesOut: 0,
  messagesIn: 0,
  bytesOut: 0,
  bytesIn: 0,
  changesOut: 0,
  changesIn: 0,
})

interface Pending {
  resolve: (r: RoundResult) => void
  cancel: () => void
  timedOut: boolean
}

interface Outbox {
  /** Replies being sent or waiting to be, to this peer. */
  queued: number
  /** Settles when the last of them has gone out. */
  tail: Promise<void>
}

/**
 * Connects a SyncSession to a Transport: every frame in goes through `session.respond`, one
 * message at a time (so the replicas see one step at a time), yielding to the event loop every
 * `messagesPerYield` messages; and `syncSpace` runs one full round with one remote, returning
 * its round trips and bytes each way.
 *
 * Replies stream out under the transport's backpressure: each peer has an outbox that sends its
 * replies in order, pulling the next message of a reply only when the transport has taken the
 * previous one (`drain`). A reply that can go out at once is sent before the next message is
 * handled (in the simulator, always); one that has to wait for its peer continues in the
 * outbox while other messages are handled, so a slow peer slows only its own replies. At most
 * `maxQueuedReplies` replies wait per peer (past that the peer's messages are dropped and
 * counted), and a reply its peer has taken nothing of for `sendStallMs` is abandoned.
 */
export class SyncDriver {
  private readonly queue = new SerialQueue()
  private readonly outboxes = new Map<string, Outbox>()
  private handled = 0
  /** Replies abandoned because their peer stopped taking bytes. */
  sendStalls = 0
  private readonly pending = new Map<string, Pending>()
  private readonly authWaiters = new Map<string, Array<() => void>>()
  private closed = false
  /** Frames the transport refused to send (peer down, closed, too large). */
  sendFailures = 0

  constructor(private readonly opts: DriverOptions) {
    const { transport, session } = opts
    session.events.on('exchangeEnd', (e) => this.ended(e))
    session.events.on('authenticated', ({ peer }) => {
      const ws = this.authWaiters.get(peer)
      this.authWaiters.delete(peer)
      ws?.forEach((w) => w())
    })
    transport.onMessage((from, bytes) => this.fire(() => this.receive(from, bytes)))
    // Outside the serial queue: only work ahead that the message's own turn takes up.
    transport.onUpcoming?.((from, bytes) => session.upcoming(from, bytes))
    transport.onPeerUp((peer) => this.fire(() => this.post(peer, session.peerUp(peer))))
    transport.onPeerDown((peer) => this.fire(() => session.peerDown(peer)))
  }

  /** The last error a queued task threw (the session itself never throws). */
  lastError: unknown

  /** Queues a task and returns once the queue is empty (work it queues in turn included). */
  private fire(fn: () => unknown): Promise<void> {
    this.enqueue(fn).catch((err: unknown) => {
      this.lastError = err
    })
    return this.drain()
  }

  /** Settles when nothing is queued, including work queued by the work it waited for. */
  drain(): Promise<void> {
    return this.queue.drained()
  }

  /** Settles when nothing is queued and every reply has gone out. */
  async idle(): Promise<void> {
    for (;;) {
      await this.drain()
      const tails = [...this.outboxes.values()].map((b) => b.tail)
      if (!tails.length) return
      await Promise.all(tails)
    }
  }

  private async receive(from: string, bytes: Uint8Array) {
    if (++this.handled % PEER_LIMITS.messagesPerYield === 0) await this.opts.timer.yield()
    if ((this.outboxes.get(from)?.queued ?? 0) > PEER_LIMITS.maxQueuedReplies) {
      // The peer keeps asking while it does not take our replies: drop, counted.
      const c = this.opts.session.countersOf(from)
      c.dropped.busy = (c.dropped.busy ?? 0) + 1
      return
    }
    await this.post(from, await this.opts.session.respond(from, bytes))
  }

  /**
   * Queues a reply in the peer's outbox. Settles once it has gone out, or as soon as it has to
   * wait for the peer (it then goes on in the outbox), or at once when other replies to the
   * peer are ahead of it.
   */
  private post(peer: string, out: AsyncIterable<Outgoing> | Outgoing[]): Promise<void> {
    let box = this.outboxes.get(peer)
    if (!box) this.outboxes.set(peer, (box = { queued: 0, tail: Promise.resolve() }))
    const b = box
    b.queued++
    let handOff!: () => void
    const handed = new Promise<void>((r) => (handOff = r))
    const run = async () => {
      try {
        await this.pump(peer, out, handOff)
      } catch (err) {
        this.lastError = err
      } finally {
        b.queued--
        handOff()
        if (b.queued === 0 && this.outboxes.get(peer) === b) this.outboxes.delete(peer)
      }
    }
    const first = b.queued === 1
    b.tail = first ? run() : b.tail.then(run)
    return first ? handed : Promise.resolve()
  }

  /** Sends a reply's messages as the transport takes them; stops at the first failure. */
  private async pump(peer: string, out: AsyncIterable<Outgoing> | Outgoing[], blocked: () => void) {
    let sinceYield = 0
    for await (const o of out) {
      try {
        this.opts.transport.send(o.to, o.bytes)
      } catch (err) {
        if (!(err instanceof TransportError)) throw err
        this.sendFailures++
        return
      }
      const wait = this.opts.transport.drain?.(o.to)
      if (!wait) {
        // Building and encrypting a long reply the transport keeps taking is work too: let
        // the event loop run (pings, other peers, the API) every few messages' worth.
        sinceYield += o.bytes.length
        if (sinceYield >= PEER_LIMITS.bytesPerYield) {
          sinceYield = 0
          await this.opts.timer.yield()
        }
        continue
      }
      sinceYield = 0
      blocked()
      if (!(await this.within(wait, PEER_LIMITS.sendStallMs))) {
        this.sendStalls++
        return
      }
    }
  }

  /** True when `p` resolves within `ms`; false when it rejects or the time passes first. */
  private within(p: Promise<void>, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const cancel = this.opts.timer.after(ms, () => resolve(false))
      p.then(
        () => {
          cancel()
          resolve(true)
        },
        () => {
          cancel()
          resolve(false)
        },
      )
    })
  }

  /** Runs `fn` after everything queued before it; the result promise settles when it has run. */
  enqueue<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.queue.run(fn)
  }

  /**
   * Opens a round; resolves once its first message is queued, and `done` settles when the round
   * ends. When the peer has not authenticated on this link yet, our challenge goes first and the
   * round opens as soon as its answer arrives (or ends as `unauthenticated` at the timeout).
   */
  async begin(peer: string, spaceId: string): Promise<{ done: Promise<RoundResult> }> {
    if (this.closed) return { done: Promise.resolve(empty('closed')) }
    if (this.opts.session.identityOf(peer)) return this.enqueue(() => this.openNow(peer, spaceId))
    let resolve!: (r: RoundResult) => void
    const done = new Promise<RoundResult>((r) => (resolve = r))
    let waiting = true
    const cancel = this.opts.timer.after(this.opts.timeoutMs ?? 10_000, () => {
      waiting = false
      resolve(empty('unauthenticated'))
    })
    const list = this.authWaiters.get(peer) ?? []
    // Runs inside the task that handled the peer's answer: the open is queued right behind it.
    list.push(() => {
      if (!waiting) return
      waiting = false
      cancel()
      this.enqueue(async () => void (await this.openNow(peer, spaceId)).done.then(resolve)).catch((err: unknown) => {
        this.lastError = err
      })
    })
    this.authWaiters.set(peer, list)
    await this.enqueue(() => this.post(peer, this.opts.session.challenge(peer)))
    return { done }
  }

  /** Authenticates the link to a peer if it has not yet; false when its answer does not come in time. */
  authenticate(peer: string): Promise<boolean> {
    if (this.closed) return Promise.resolve(false)
    if (this.opts.session.identityOf(peer)) return Promise.resolve(true)
    return new Promise((resolve) => {
      let waiting = true
      const cancel = this.opts.timer.after(this.opts.timeoutMs ?? 10_000, () => {
        if (waiting) resolve(false)
        waiting = false
      })
      const list = this.authWaiters.get(peer) ?? []
      list.push(() => {
        if (!waiting) return
        waiting = false
        cancel()
        resolve(true)
      })
      this.authWaiters.set(peer, list)
      this.enqueue(() => this.post(peer, this.opts.session.challenge(peer))).catch((err: unknown) => {
        this.lastError = err
      })
    })
  }

  /**
   * Whether a round about the space may open with the peer (its account may read it at our ACL
   * state); undefined while the peer has not authenticated.
   */
  mayOpen(peer: string, spaceId: string): Promise<boolean | undefined> {
    return this.opts.session.mayOpen(peer, spaceId)
  }

  /** Sends changes just written here to a reader, unasked (SyncSession.lonePush); true when they went out. */
  pushLone(peer: string, spaceId: string, changeIds: readonly string[], treeIds: readonly string[]): Promise<boolean> {
    if (this.closed) return Promise.resolve(false)
    return this.enqueue(async () => {
      const out = await this.opts.session.lonePush(peer, spaceId, changeIds, treeIds)
      if (!out) return false
      await this.post(peer, out)
      return true
    })
  }

  /** Sends the removal notice due to a peer, if one is (SyncSession.removalNotice); true when it went out. */
  noticeRemoval(peer: string, spaceId: string): Promise<boolean> {
    if (this.closed) return Promise.resolve(false)
    return this.enqueue(async () => {
      const out = await this.opts.session.removalNotice(peer, spaceId)
      if (!out) return false
      await this.post(peer, out)
      return true
    })
  }

  /**
   * Sends a join (see SyncSession.openJoin) to an authenticated peer; false when the peer has
   * not authenticated (our challenge goes instead) or the driver is closed.
   */
  sendJoin(peer: string, spaceId: string, change: Uint8Array): Promise<boolean> {
    if (this.closed) return Promise.resolve(false)
    return this.enqueue(async () => {
      const r = this.opts.session.openJoin(peer, spaceId, change)
      await this.post(peer, r.out)
      return !('error' in r)
    })
  }

  /** One full round with `peer` about `spaceId` (authenticating the link first if needed). */
  async syncSpace(peer: string, spaceId: string): Promise<RoundResult> {
    return (await this.begin(peer, spaceId)).done
  }

  private async openNow(peer: string, spaceId: string): Promise<{ done: Promise<RoundResult> }> {
    const opened = await this.opts.session.open(peer, spaceId)
    if ('error' in opened) {
      await this.post(peer, opened.out)
      return { done: Promise.resolve(empty(opened.error)) }
    }
    const k = key(peer, opened.req)
    const done = new Promise<RoundResult>((resolve) => {
      const p: Pending = { resolve, timedOut: false, cancel: () => undefined }
      p.cancel = this.opts.timer.after(this.opts.timeoutMs ?? 10_000, () => {
        p.timedOut = true
        this.opts.session.abandon(peer, opened.req)
      })
      this.pending.set(k, p)
    })
    await this.post(peer, opened.out)
    return { done }
  }

  async close(): Promise<void> {
    this.closed = true
    for (const [k, p] of this.pending) {
      this.pending.delete(k)
      p.cancel()
      p.resolve(empty('closed'))
    }
    await this.opts.transport.close()
  }

  private ended(e: ExchangeEnd) {
    const k = key(e.peer, e.req)
    const p = this.pending.get(k)
    if (!p) return
    this.pending.delete(k)
    p.cancel()
    const outcome: RoundOutcome = p.timedOut ? 'timeout' : e.outcome
    p.resolve({
      ok: outcome === 'in_sync' || outcome === 'synced',
      outcome,
      ...(e.error ? { error: e.error } : {}),
      roundTrips: e.roundTrips,
      messagesOut: e.messagesOut,
      messagesIn: e.messagesIn,
      bytesOut: e.bytesOut,
      bytesIn: e.bytesIn,
      changesOut: e.changesOut,
      changesIn: e.changesIn,
    })
  }
}

const key = (peer: string, req: number) => `${peer}\u0000${req}`
