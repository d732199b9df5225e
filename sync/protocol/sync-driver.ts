import type { ExchangeCost, ExchangeEnd, Outgoing, SyncSession } from './session.ts'
import { TransportError, type Transport } from './transport.ts'

/** Timers, injected: the daemon passes real ones, the simulator virtual ones. */
export interface Timer {
  /** Calls `fn` once after `ms`; returns a function that cancels it. */
  after(ms: number, fn: () => void): () => void
}

export type RoundOutcome = ExchangeEnd['outcome'] | 'timeout' | 'unauthenticated' | 'unknown_space' | 'busy' | 'closed'

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
  ok: false, outcome, roundTrips: 0, messagesOut: 0, messagesIn: 0, bytesOut: 0, bytesIn: 0, changesOut: 0, changesIn: 0,
})

interface Pending {
  resolve: (r: RoundResult) => void
  cancel: () => void
  timedOut: boolean
}

/**
 * Connects a SyncSession to a Transport: every frame in goes through `session.handle`, every
 * reply goes out, one message at a time (so the replicas see one step at a time), and
 * `syncSpace` runs one full round with one remote, returning its round trips and bytes each way.
 */
export class SyncDriver {
  private chain: Promise<unknown> = Promise.resolve()
  private readonly pending = new Map<string, Pending>()
  private readonly authWaiters = new Map<string, Array<() => void>>()
  private closed = false
  /** Frames the transport refused to send (peer down, closed, too large). */
  sendFailures = 0

  constructor(private readonly opts: DriverOptions) {
    const { transport, session } = opts
    session.onExchangeEnd = (e) => this.ended(e)
    session.onAuthenticated = (peer) => {
      const ws = this.authWaiters.get(peer)
      this.authWaiters.delete(peer)
      ws?.forEach((w) => w())
    }
    transport.onMessage((from, bytes) => this.fire(async () => this.sendAll(await session.handle(from, bytes))))
    transport.onPeerUp((peer) => this.fire(() => this.sendAll(session.peerUp(peer))))
    transport.onPeerDown((peer) => this.fire(() => session.peerDown(peer)))
  }

  /** The last error a queued task threw (the session itself never throws). */
  lastError: unknown

  /** Queues a task and returns once the queue is empty (work it queues in turn included). */
  private fire(fn: () => unknown): Promise<void> {
    this.enqueue(fn).catch((err) => (this.lastError = err))
    return this.drain()
  }

  /** Settles when nothing is queued, including work queued by the work it waited for. */
  async drain(): Promise<void> {
    let c: Promise<unknown>
    do {
      c = this.chain
      await c
    } while (c !== this.chain)
  }

  /** Runs `fn` after everything queued before it; the result promise settles when it has run. */
  enqueue<T>(fn: () => T | Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn)
    this.chain = run.catch(() => undefined)
    return run
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
      this.enqueue(async () => void (await this.openNow(peer, spaceId)).done.then(resolve)).catch((err) => (this.lastError = err))
    })
    this.authWaiters.set(peer, list)
    await this.enqueue(() => this.sendAll(this.opts.session.challenge(peer)))
    return { done }
  }

  /** One full round with `peer` about `spaceId` (authenticating the link first if needed). */
  async syncSpace(peer: string, spaceId: string): Promise<RoundResult> {
    return (await this.begin(peer, spaceId)).done
  }

  private async openNow(peer: string, spaceId: string): Promise<{ done: Promise<RoundResult> }> {
    const opened = await this.opts.session.open(peer, spaceId)
    if ('error' in opened) {
      this.sendAll(opened.out)
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
    this.sendAll(opened.out)
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
      ok: outcome === 'in_sync' || outcome === 'synced', outcome, ...(e.error ? { error: e.error } : {}),
      roundTrips: e.roundTrips, messagesOut: e.messagesOut, messagesIn: e.messagesIn, bytesOut: e.bytesOut, bytesIn: e.bytesIn,
      changesOut: e.changesOut, changesIn: e.changesIn,
    })
  }

  private sendAll(out: Outgoing[]) {
    for (const o of out) {
      try {
        this.opts.transport.send(o.to, o.bytes)
      } catch (err) {
        if (!(err instanceof TransportError)) throw err
        this.sendFailures++
      }
    }
  }
}

const key = (peer: string, req: number) => `${peer}\u0000${req}`
