import { errField, silentLogger, type Logger } from '../../sync/core/log.ts'
import { multiaddr } from '@multiformats/multiaddr'
import { decodePushReply, PUSH_PROTOCOL, type PushReply } from '../../sync/protocol/push-wire.ts'
import type { SvcLibp2p } from '../p2p/libp2p-node.ts'
import type { PushNodeTarget } from './config.ts'
import { readOneFrame, writeFrame } from './rpc.ts'

/** A reply is a few bytes of CBOR. */
const MAX_REPLY_BYTES = 1024
const DIAL_TIMEOUT_MS = 10_000
/** The node forwards before it answers: room for a slow provider. */
const REPLY_TIMEOUT_MS = 30_000
/** Requests in flight at once, well under the node's streams per connection: the rest wait here. */
export const MAX_IN_FLIGHT = 16

/**
 * The daemon's side of `/svc/push/1.0.0`: one stream per request over the daemon's own libp2p
 * node (TCP, Noise, Yamux), dialled at the configured addresses; Noise checks the node's peer id,
 * so a request never reaches another host than the one named. Throws when the node is
 * unreachable (the outbox retries).
 */
export class PushNodeClient {
  private readonly addrs
  private inFlight = 0
  private readonly waiting: Array<() => void> = []

  constructor(
    private readonly node: SvcLibp2p,
    readonly target: PushNodeTarget,
    private readonly log: Logger = silentLogger,
  ) {
    this.addrs = target.addrs.map((a) => multiaddr(a))
  }

  async request(bytes: Uint8Array): Promise<PushReply> {
    if (this.inFlight >= MAX_IN_FLIGHT) await new Promise<void>((r) => this.waiting.push(r))
    this.inFlight++
    try {
      return await this.roundTrip(bytes)
    } finally {
      this.inFlight--
      this.waiting.shift()?.()
    }
  }

  private async roundTrip(bytes: Uint8Array): Promise<PushReply> {
    const stream = await this.node.dialProtocol(this.addrs, PUSH_PROTOCOL, { signal: AbortSignal.timeout(DIAL_TIMEOUT_MS) })
    try {
      writeFrame(stream, bytes)
      const reply = decodePushReply(await readOneFrame(stream, MAX_REPLY_BYTES, REPLY_TIMEOUT_MS))
      // The reply is in: a close that fails (the node hung up first) changes nothing.
      await stream.close().catch((err: unknown) => this.log.debug('closing the push node stream after its reply failed', { err: errField(err) }))
      return reply
    } catch (err) {
      stream.abort(err as Error)
      throw err
    }
  }
}
