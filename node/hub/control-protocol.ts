import { errField, type Logger } from '../../sync/core/log.ts'
import type { HubCore } from '../../sync/hub/hub-core.ts'
import { decodeHubMessage, encodeHubMessage, HUB_WIRE, MalformedHubFrame } from '../../sync/protocol/hub-wire.ts'
import type { SvcLibp2p } from '../p2p/libp2p-node.ts'
import { readOneFrame, writeFrame } from '../push/rpc.ts'

/** A request is one frame, read within this time: a silent peer does not hold a stream. */
const REQUEST_TIMEOUT_MS = 10_000
/**
 * How long a request waits for its peer's proof of account when that is still under way: a
 * device sends its first registration as soon as it has verified the hub's proof, and that
 * request (a stream of its own) can reach the hub before the device's proof does.
 */
export const CONTROL_AUTH_WAIT_MS = 5_000
/** Control requests are rare (on connect, then every few minutes): few streams per connection. */
const STREAMS_PER_CONNECTION = 4

/**
 * The hub's control protocol (`/svc/hub/1.0.0`, sync/protocol/hub-wire.ts) over libp2p: one
 * request frame and one `status` frame per stream, the account being the one the peer proved on
 * its head-sync link. Returns the number of requests being answered, for the hub's queue depths.
 */
export async function handleControl(o: {
  node: SvcLibp2p
  core: HubCore
  /** The account the peer proved on its head-sync link, waiting up to `waitMs` for a proof under way. */
  provedBy(peer: string, waitMs: number): Promise<string | undefined>
  fault(peer: string): void
  log: Logger
}): Promise<() => number> {
  let inFlight = 0
  await o.node.handle(
    HUB_WIRE.protocol,
    async (stream, connection) => {
      const peer = connection.remotePeer.toString()
      inFlight++
      try {
        const req = decodeHubMessage(await readOneFrame(stream, HUB_WIRE.maxFrameBytes, REQUEST_TIMEOUT_MS))
        writeFrame(stream, encodeHubMessage(await o.core.handle(await o.provedBy(peer, CONTROL_AUTH_WAIT_MS), req)))
        await stream.close()
      } catch (err) {
        if (err instanceof MalformedHubFrame) o.fault(peer)
        o.log.info('a hub control stream failed', { peer, err: errField(err) })
        stream.abort(new Error('hub control request failed'))
      } finally {
        inFlight--
      }
    },
    { maxInboundStreams: STREAMS_PER_CONNECTION },
  )
  return () => inFlight
}
