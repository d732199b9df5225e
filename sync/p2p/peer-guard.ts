import { backoffDelay } from '../core/backoff.ts'
import { P2P } from './constants.ts'
import { BoundedMap } from '../protocol/bounded-map.ts'

export interface PeerGuardOptions {
  now: () => number
  /** Fault score at which a peer is disconnected and backed off. */
  maxFaults?: number
  /** The score drains by this much per second, so an honest peer's rare refusals never add up. */
  faultLeakPerSec?: number
  /** First back-off; each further one for the same peer doubles, up to `backoffMaxMs`. */
  backoffBaseMs?: number
  backoffMaxMs?: number
  /** Peers tracked at once (least recently seen evicted first). */
  maxTracked?: number
}

interface Record {
  score: number
  /** When `score` was last brought up to date (ms). */
  at: number
  /** Back-offs so far: the next one lasts backoffBaseMs * 2^bans. */
  bans: number
  until: number
}

/**
 * Misbehaviour accounting per peer: every malformed or refused message (the session's drop,
 * reject and deny counters, the transport's framing faults) is a fault. A peer whose fault
 * score reaches `maxFaults` is backed off: the daemon hangs up on it and refuses its
 * connections, dials and streams until the back-off ends, and each further back-off of the
 * same peer lasts twice as long. Memory is bounded: at most `maxTracked` peers are remembered.
 */
export class PeerGuard {
  private readonly peers: BoundedMap<string, Record>
  private readonly o: Required<PeerGuardOptions>
  /** Back-offs started since boot. */
  backoffs = 0

  constructor(opts: PeerGuardOptions) {
    this.o = {
      maxFaults: P2P.maxPeerFaults,
      faultLeakPerSec: P2P.peerFaultLeakPerSec,
      backoffBaseMs: P2P.peerBackoffBaseMs,
      backoffMaxMs: P2P.peerBackoffMaxMs,
      maxTracked: P2P.maxTrackedPeers,
      ...opts,
    }
    this.peers = new BoundedMap(this.o.maxTracked)
  }

  /** Adds `weight` faults; true when this put the peer into back-off (hang up on it now). */
  fault(peer: string, weight = 1): boolean {
    const now = this.o.now()
    const r = this.peers.get(peer) ?? { score: 0, at: now, bans: 0, until: 0 }
    if (now < r.until) {
      this.peers.set(peer, r)
      return true
    }
    r.score = Math.max(0, r.score - ((now - r.at) / 1000) * this.o.faultLeakPerSec) + weight
    r.at = now
    let banned = false
    if (r.score >= this.o.maxFaults) {
      r.until = now + backoffDelay(r.bans, this.o.backoffBaseMs, this.o.backoffMaxMs)
      r.bans++
      r.score = 0
      this.backoffs++
      banned = true
    }
    this.peers.set(peer, r)
    return banned
  }

  /** The score that backs a peer off. */
  get maxFaults(): number {
    return this.o.maxFaults
  }

  /** Whether the peer is backed off now. */
  refused(peer: string): boolean {
    const r = this.peers.peek(peer)
    return !!r && this.o.now() < r.until
  }

  /** When the peer's back-off ends (ms), if it is backed off. */
  backedOffUntil(peer: string): number | undefined {
    const r = this.peers.peek(peer)
    return r && this.o.now() < r.until ? r.until : undefined
  }

  /** Peers remembered now (bounded by maxTracked). */
  get tracked(): number {
    return this.peers.size
  }
}
