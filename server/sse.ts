import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { DEFAULT_MAILBOX_CAPACITY, MAX_MAILBOX_CAPACITY, MIN_MAILBOX_CAPACITY, SSE_CLOSE_GRACE_MS, SSE_KEEPALIVE_MS } from '../sync/core/limits.ts'
import { Mailbox } from '../sync/query/mailbox.ts'

/**
 * Server-Sent Events for every live route (spec Events): `ready` first, stream frames, a
 * `: keepalive` comment while idle, and a terminal `closed` frame with a reason.
 *
 * Backpressure: frames go straight to the socket while it accepts them; once the socket's
 * buffer is over its high-water mark, frames wait in the subscriber's mailbox (the bounded
 * ring of sync/query/mailbox.ts, the one queue live queries use). A frame that finds the
 * mailbox full closes the stream with `overflow`: a slow reader never makes the server buffer
 * without bound. Terminal frames skip the mailbox.
 */
export type CloseReason = 'server_shutdown' | 'deauthorized' | 'sdk_closed' | 'overflow' | 'drifted'

// The app's defaults, under the names server/app.ts reads (the values live in core/limits.ts).
export { DEFAULT_MAILBOX_CAPACITY as DEFAULT_MAILBOX, SSE_CLOSE_GRACE_MS as DEFAULT_CLOSE_GRACE_MS, SSE_KEEPALIVE_MS as DEFAULT_KEEPALIVE_MS }

export interface SseSettings {
  keepaliveMs: number
  mailboxCapacity: number
  closeGraceMs: number
}

/** One SSE frame's text; serialize once and `sendFrame` it to every stream that shows it. */
export const sseFrame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

export class SseStream {
  private readonly pending: Mailbox<string>
  private readonly listeners: Array<(reason: CloseReason | 'disconnected') => void> = []
  private readonly keepalive: NodeJS.Timeout
  private wroteSinceTick = false
  private done = false

  constructor(
    private readonly res: ServerResponse,
    capacity: number,
    private readonly settings: SseSettings,
    private readonly forget: (s: SseStream) => void,
  ) {
    this.pending = new Mailbox<string>(capacity)
    res.on('drain', () => this.flush())
    res.on('close', () => this.finish('disconnected'))
    this.keepalive = setInterval(() => this.tick(), settings.keepaliveMs)
    this.keepalive.unref()
    this.write(sseFrame('ready', {}))
  }

  get closed(): boolean {
    return this.done
  }

  /** Frames waiting for the socket to drain. */
  get queued(): number {
    return this.pending.size
  }

  /** Queues one frame. False when the stream is closed (or this frame overflowed it). */
  send(event: string, data: unknown): boolean {
    if (this.done) return false
    return this.sendFrame(sseFrame(event, data))
  }

  /** Queues one frame made by {@link sseFrame}, like `send`. */
  sendFrame(text: string): boolean {
    if (this.done) return false
    if (this.pending.size === 0 && !this.res.writableNeedDrain) {
      this.write(text)
      return true
    }
    if (this.pending.push(text) === 'ok') return true
    this.close('overflow')
    return false
  }

  /** Ends the stream with a terminal `closed` frame. Idempotent. */
  close(reason: CloseReason): void {
    if (this.done) return
    const backedUp = this.res.writableNeedDrain
    const socket = this.res.socket
    this.pending.clear()
    this.res.write(sseFrame('closed', { reason }))
    this.res.end()
    // The response "finishes" once its bytes are handed to the socket; a reader that stopped
    // reading must not hold them (and the socket) forever.
    if (backedUp && socket) {
      const cut = setTimeout(() => socket.destroy(), this.settings.closeGraceMs)
      cut.unref()
      const spare = () => clearTimeout(cut)
      socket.once('drain', spare)
      socket.once('close', spare)
    }
    this.finish(reason)
  }

  /** Called once when the stream ends, by `close` or by the client going away. */
  onClose(listener: (reason: CloseReason | 'disconnected') => void): void {
    if (this.done) return
    this.listeners.push(listener)
  }

  private write(text: string): void {
    this.res.write(text)
    this.wroteSinceTick = true
  }

  private flush(): void {
    while (!this.done && this.pending.size > 0 && !this.res.writableNeedDrain) this.write(this.pending.shift() as string)
  }

  private tick(): void {
    if (!this.wroteSinceTick && this.pending.size === 0 && !this.res.writableNeedDrain) this.res.write(': keepalive\n\n')
    this.wroteSinceTick = false
  }

  private finish(reason: CloseReason | 'disconnected'): void {
    if (this.done) return
    this.done = true
    clearInterval(this.keepalive)
    this.forget(this)
    for (const l of this.listeners.splice(0)) l(reason)
  }
}

/** Every open stream of one app, so shutdown and deauthorization can close them all. */
export class SseHub {
  private readonly streams = new Set<SseStream>()

  /**
   * `refuse` names the reason a stream opened right now must close at once (the server began
   * shutting down or the account was torn down after the request passed the gate).
   */
  constructor(
    readonly settings: SseSettings,
    private readonly refuse: (request: FastifyRequest) => CloseReason | undefined = () => undefined,
  ) {}

  get size(): number {
    return this.streams.size
  }

  /**
   * Takes over the reply and opens a stream (headers, then `ready`). Headers already set on
   * the reply (CORS) are kept. `mailboxCapacity` is clamped to the mailbox bounds.
   */
  open(reply: FastifyReply, opts: { mailboxCapacity?: number } = {}): SseStream {
    reply.hijack()
    const res = reply.raw
    res.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      // The connection belongs to the stream: it ends with it, so a draining server never
      // waits on an idle keep-alive socket.
      connection: 'close',
      'x-accel-buffering': 'no',
    })
    res.socket?.setNoDelay(true)
    const asked = opts.mailboxCapacity ?? this.settings.mailboxCapacity
    const capacity = Math.min(MAX_MAILBOX_CAPACITY, Math.max(MIN_MAILBOX_CAPACITY, asked))
    const stream = new SseStream(res, capacity, this.settings, (s) => this.streams.delete(s))
    const refused = this.refuse(reply.request)
    if (refused) stream.close(refused)
    else if (!stream.closed) this.streams.add(stream)
    return stream
  }

  closeAll(reason: CloseReason): void {
    for (const s of [...this.streams]) s.close(reason)
  }
}
