import { decodeChange } from '../dag/change.ts'
import { JOIN_LIMITS, PEER_LIMITS } from './limits.ts'
import type { JoinMsg } from './messages.ts'
import { bump, type PeerCounters } from './peer-counters.ts'
import { RateBuckets } from './rate-buckets.ts'
import { fixed, NO_REPLY, type Reply } from './reply.ts'
import type { JoinStatus } from './sharing-network.ts'

/**
 * The holder's side of a join request arriving over the wire. The host decides (the replica
 * checks the proof against a live invite and ingests the request into the ACL).
 */
export interface JoinHandler {
  /**
   * Takes the raw signed `join` (or `cancel`) ACL change `raw` about `spaceId`, authored by
   * `fromIdentity` (the account proved on the link). Answers the request's status at our ACL
   * state, or undefined when we do not hold the space or the change is no valid request there
   * (no such live invite, bad proof, ...): the peer then gets the answer for a space we do not
   * hold. Must not throw for bad input (a throw is counted as `internal` and refused the same).
   */
  accept(spaceId: string, raw: Uint8Array, fromIdentity: string): Promise<JoinStatus | undefined>
}

/**
 * Answers `join` messages (docs/protocol.md, "Joining"). No oracle: a join is answered with
 * `joined` only when the handler accepts it; anything else gets exactly the `error
 * unknown_space` a space we do not hold gets. What costs a strike is decided before the space
 * is looked at (a change that is not an ACL change of the named space by the sender, a peer past
 * its join budget), so strikes and their disconnects reveal nothing either.
 */
export class JoinResponder {
  private readonly budget: RateBuckets

  constructor(
    private readonly handler: JoinHandler | undefined,
    now: () => number,
    private readonly onError: (err: unknown) => void,
  ) {
    this.budget = new RateBuckets(JOIN_LIMITS.joinBurst, JOIN_LIMITS.joinRefillMs, PEER_LIMITS.maxPeerCounters, now)
  }

  async onJoin(c: PeerCounters, peer: string, identity: string, m: JoinMsg): Promise<Reply> {
    // Charged before anything is looked at: a flood costs us one token check per message.
    if (!this.budget.take(peer)) {
      bump(c.dropped, 'over_budget')
      return NO_REPLY
    }
    if (!this.wellFormed(m, identity)) {
      bump(c.dropped, 'malformed')
      return NO_REPLY
    }
    let status: JoinStatus | undefined
    if (this.handler) {
      try {
        status = await this.handler.accept(m.spaceId, m.change, identity)
      } catch (err) {
        this.onError(err)
        status = undefined
      }
    }
    if (!status) return fixed([{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'unknown_space' }])
    return fixed([{ type: 'joined', spaceId: m.spaceId, req: m.req, status }])
  }

  /** The change is an ACL change of the named space (not its root), signed by the sender's account. */
  private wellFormed(m: JoinMsg, identity: string): boolean {
    try {
      const ch = decodeChange(m.change)
      return ch.spaceId === m.spaceId && ch.treeId === m.spaceId && ch.author === identity
    } catch {
      return false
    }
  }
}
