import type { Logger } from '../core/log.ts'
import { silentLogger } from '../core/log.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import { SyncSession, type PeerCounters, type SessionOptions } from './session.ts'
import { WireSharing } from './sharing-wire.ts'
import { SyncDriver, type Timer } from './sync-driver.ts'
import { ScheduledPeers, SyncScheduler, type SchedulerOptions } from './sync-scheduler.ts'
import type { Transport } from './transport.ts'

/** Where the stack reports peers whose messages were malformed or refused (the daemon's PeerGuard). */
export interface FaultSink {
  /** One message of `peer` raised its fault count; `weight` faults at once. */
  fault(peer: string): void
}

export interface SyncStackOptions {
  transport: Transport
  /** The session's options; `offered` is the stack's sharing, so it is not given here. */
  session: Omit<SessionOptions, 'offered' | 'peerId'>
  /**
   * The clock of rounds, scheduling and join retries; or one per role, so the simulator's trace
   * names whose timer fired.
   */
  timer: Timer | ((role: TimerRole) => Timer)
  /** A round not finished after this long is abandoned (default the driver's). */
  roundTimeoutMs?: number
  /** The spaces rounds run for, asked whenever the scheduler plans. */
  spaceIds(): string[]
  /** Told of every message that raised its sender's fault count. */
  faults?: FaultSink
  /** Retry delays of this side's joins over the wire (tests shorten them). */
  joinRetry?: { baseMs?: number; maxMs?: number }
  log?: Logger
}

export type TimerRole = 'rounds' | 'scheduling' | 'joins'

/** Malformed or refused messages a peer has sent so far, by the session's counters. */
export function faultsIn(c: PeerCounters | undefined): number {
  if (!c) return 0
  let n = c.denied
  // A hub's quota refuses an honest peer's changes too: not a fault (it offers them again later).
  for (const k in c.dropped) if (k !== 'over_quota') n += c.dropped[k]
  for (const k in c.rejected) n += c.rejected[k]
  return n
}

/**
 * Head sync assembled over any Transport: the session, the driver, sharing over the wire (joins
 * and offers), and when asked the scheduler that decides when rounds run, fed what the daemon
 * feeds it (peers that proved an account after the driver saw them, and every commit of a
 * watched replica). The daemon (node/daemon/p2p-service.ts) runs it over libp2p, a page
 * (sync/browser/sync.ts) over libp2p WebSockets and the simulator (sim/peer.ts) over its
 * virtual network, so all three run one wiring; only the socket, the clock and who holds the
 * spaces differ.
 */
export class SyncStack {
  readonly session: SyncSession
  readonly driver: SyncDriver
  readonly sharing: WireSharing
  private scheduling?: { scheduler: SyncScheduler; peers: ScheduledPeers }
  private readonly watches = new Map<string, () => void>()

  private readonly timerOf: (role: TimerRole) => Timer

  constructor(private readonly o: SyncStackOptions) {
    const transport = o.transport
    const timer = o.timer
    this.timerOf = typeof timer === 'function' ? timer : () => timer
    // eslint-disable-next-line prefer-const -- assigned below, after the session whose offered callback reads it is built
    let sharing!: WireSharing
    const log = o.log ?? silentLogger
    this.session = new SyncSession({
      log: log.child('session'),
      ...o.session,
      peerId: transport.peerId,
      offered: (spaceId, identity, peer) => sharing.offered(spaceId, identity, peer),
    })
    this.driver = new SyncDriver({ transport: this.tapped(transport), session: this.session, timer: this.timerOf('rounds'), timeoutMs: o.roundTimeoutMs })
    sharing = this.sharing = new WireSharing({
      session: this.session,
      driver: this.driver,
      timer: this.timerOf('joins'),
      peers: () => transport.peers(),
      retryBaseMs: o.joinRetry?.baseMs,
      retryMaxMs: o.joinRetry?.maxMs,
      log: log.child('joins'),
    })
  }

  /** The scheduler while scheduling runs. */
  get scheduler(): SyncScheduler | undefined {
    return this.scheduling?.scheduler
  }

  /**
   * Starts planning rounds by itself: for peers already linked and for every commit of a
   * watched replica from now on. `now` is the clock the scheduler plans by.
   */
  startScheduling(opts: SchedulerOptions | undefined, now: () => number): SyncScheduler {
    if (this.scheduling) return this.scheduling.scheduler
    const scheduler = new SyncScheduler(this.driver, () => this.o.spaceIds(), this.timerOf('scheduling'), now, opts)
    const peers = new ScheduledPeers(
      () => scheduler,
      this.session,
      () => this.o.transport.peers(),
    )
    this.scheduling = { scheduler, peers }
    return scheduler
  }

  /** Peers whose link came up before the driver listened: their rounds authenticate them. */
  adoptLinkedPeers(): void {
    for (const p of this.o.transport.peers()) this.scheduling?.peers.adopt(p)
  }

  /** Stops planning rounds; rounds under way finish. */
  stopScheduling(): void {
    const s = this.scheduling
    this.scheduling = undefined
    if (!s) return
    s.scheduler.stop()
    s.peers.stop()
  }

  /** Every commit of `replica` (local writes, changes received) asks the scheduler for a round of its space. */
  watch(spaceId: string, replica: SpaceReplica): void {
    this.watches.get(spaceId)?.()
    this.watches.set(
      spaceId,
      replica.addCommitListener((info) => this.scheduling?.scheduler.changed(spaceId, info.local, info)),
    )
  }

  /** Stops following a replica's commits (a hub closed the space). */
  unwatch(spaceId: string): void {
    this.watches.get(spaceId)?.()
    this.watches.delete(spaceId)
  }

  /** New spaces joined the list `spaceIds` answers: rounds for them start with every linked peer. */
  spacesAdded(spaceIds: string[]): void {
    this.scheduling?.scheduler.spacesAdded(spaceIds)
  }

  async close(): Promise<void> {
    this.stopScheduling()
    for (const stop of this.watches.values()) stop()
    this.watches.clear()
    this.sharing.close()
    await this.driver.close()
  }

  /**
   * The transport as the driver sees it: peer events also reach the scheduler (a transport has
   * one handler each), and every message is scored for the faults it caused.
   */
  private tapped(t: Transport): Transport {
    const log = this.o.log ?? silentLogger
    const faults = this.o.faults
    const scored = async (peer: string, run: () => Promise<void>) => {
      if (!faults) return run()
      const before = faultsIn(this.session.allCounters().get(peer))
      await run()
      if (faultsIn(this.session.allCounters().get(peer)) > before) {
        log.debug('a peer sent a malformed or refused message', { peer })
        faults.fault(peer)
      }
    }
    return {
      get peerId() {
        return t.peerId
      },
      get maxFrameBytes() {
        return t.maxFrameBytes
      },
      get ordered() {
        return t.ordered
      },
      send: (p, b) => t.send(p, b),
      // Backpressure passes through: without it replies would overflow the peer's stream.
      drain: (p) => t.drain?.(p),
      onMessage: (h) =>
        t.onMessage((from, bytes) =>
          scored(from, async () => {
            await h(from, bytes)
          }),
        ),
      // A hint only: the frame is scored when it is delivered.
      ...(t.onUpcoming ? { onUpcoming: (h: (from: string, bytes: Uint8Array) => void) => t.onUpcoming?.(h) } : {}),
      onPeerUp: (h) =>
        t.onPeerUp(async (p) => {
          await h(p)
          this.scheduling?.peers.up(p)
        }),
      onPeerDown: (h) =>
        t.onPeerDown(async (p) => {
          this.scheduling?.peers.down(p)
          await h(p)
        }),
      peers: () => t.peers(),
      close: () => t.close(),
    }
  }
}
