import { backoffDelay } from '../core/backoff.ts'
import { BoundedMap } from './bounded-map.ts'
import { PEER_LIMITS } from './limits.ts'
import type { SyncSession } from './session.ts'
import type { RoundResult, SyncDriver, Timer } from './sync-driver.ts'

export interface SchedulerOptions {
  /**
   * A local write after a quiet spell goes out this soon: typing in a shared paragraph should
   * reach the others in a blink, not after a batching window.
   */
  firstMs?: number
  /**
   * After a local write's round, further local writes wait out this window and share one round,
   * unless the round ended with at most one write waiting: a lone write then goes at once.
   */
  debounceMs?: number
  /**
   * A lone local write of at most this many changes also goes to every connected peer at once,
   * unasked, ahead of its round (0: never): the peer shows it after one message instead of the
   * round's several round trips, and the round then finds both sides in sync.
   */
  lonePushMaxChanges?: number
  /**
   * Pushes per space: a burst of this many, then one per `lonePushRefillMs`. Past that, writes
   * wait for their round, which carries them all at once: a bulk writer's peers ingest batches,
   * not one step per write.
   */
  lonePushBurst?: number
  lonePushRefillMs?: number
  /** Changes received from a peer are relayed to the others after this long. */
  relayMs?: number
  /** Every peer and space gets a round at least this often. */
  periodMs?: number
  /** First retry delay after a failed round with a peer; doubles up to `backoffMaxMs`. */
  backoffBaseMs?: number
  backoffMaxMs?: number
  /** Per space, the peers whose statistics are kept (default PEER_LIMITS.maxStatsPeersPerSpace). */
  maxPeerStatsPerSpace?: number
}

/** What one peer's rounds about one space have done since boot (for `{S}/debug`). */
export interface PeerSpaceStats {
  peerId: string
  lastSyncAt: number | null
  /** Changes received from the peer that were new here. */
  new: number
  /** Changes sent to the peer. */
  changed: number
  rounds: number
  lastErr: string | null
}

export interface RoundEvent {
  peer: string
  spaceId: string
  phase: 'start' | 'end'
  result?: RoundResult
}

interface PeerState {
  failures: number
  /** No rounds before this time (exponential backoff after failures). */
  notBefore: number
  retry?: () => void
}

const FAILED: ReadonlySet<string> = new Set(['timeout', 'error', 'unauthenticated', 'busy', 'abandoned', 'closed'])

/**
 * When head sync runs: a round with every connected peer for every held space when the peer
 * comes up, after local commits (debounced), and periodically; a peer whose rounds fail waits
 * exponentially longer before the next one. Rounds for one (peer, space) never overlap: a
 * request during one marks it to run again right after. A round opens only when the peer's
 * account may read the space at our ACL state (the session refuses the rest as `denied`, sending
 * nothing); such rounds are neither failures nor recorded.
 */
export class SyncScheduler {
  private readonly peers = new Map<string, PeerState>()
  private readonly inflight = new Map<string, Promise<RoundResult>>()
  private readonly again = new Set<string>()
  private readonly debounced = new Map<string, () => void>()
  private readonly relays = new Map<string, () => void>()
  /** Spaces with a local write that no push carried, waiting for the next round. */
  private readonly unsent = new Set<string>()
  /** Per space, the pushes left in its bucket and when it was last filled. */
  private readonly pushTokens = new Map<string, { tokens: number; at: number }>()
  /** Spaces whose last local round is recent, with the writes waiting for its window to end. */
  private readonly cooling = new Map<string, { waiting: number; cancel: () => void }>()
  /** Per held space, per peer (the most recent maxStatsPeersPerSpace peers that may read it). */
  readonly stats = new Map<string, BoundedMap<string, PeerSpaceStats>>()
  private readonly roundListeners = new Set<(e: RoundEvent) => void>()
  private stopPeriodic?: () => void
  private stopped = false
  private readonly o: Required<SchedulerOptions>

  constructor(
    private readonly driver: SyncDriver,
    private readonly spaces: () => string[],
    private readonly timer: Timer,
    private readonly now: () => number,
    opts: SchedulerOptions = {},
  ) {
    this.o = {
      firstMs: 5,
      debounceMs: 50,
      lonePushMaxChanges: 16,
      lonePushBurst: 16,
      lonePushRefillMs: 2,
      relayMs: 1_000,
      periodMs: 30_000,
      backoffBaseMs: 1_000,
      backoffMaxMs: 60_000,
      maxPeerStatsPerSpace: PEER_LIMITS.maxStatsPeersPerSpace,
      ...opts,
    }
    this.schedulePeriodic()
  }

  peerUp(peer: string) {
    if (this.stopped) return
    this.peers.set(peer, { failures: 0, notBefore: 0 })
    for (const l of this.peerListeners) l()
    void this.roundsWith(peer, this.spaces())
  }

  peerDown(peer: string) {
    this.peers.get(peer)?.retry?.()
    this.peers.delete(peer)
    for (const l of this.peerListeners) l()
  }

  private readonly peerListeners = new Set<() => void>()

  /** Told whenever a peer comes up or goes down. */
  onPeersChanged(fn: () => void): () => void {
    this.peerListeners.add(fn)
    return () => this.peerListeners.delete(fn)
  }

  /** Rounds starting and ending, for sync status and process records. */
  onRound(fn: (e: RoundEvent) => void): () => void {
    this.roundListeners.add(fn)
    return () => this.roundListeners.delete(fn)
  }

  /** Rounds running now, over every peer and space (a hub's queue depth). */
  inflightRounds(): number {
    return this.inflight.size
  }

  /** Rounds running now about `spaceId`. */
  running(spaceId: string): number {
    let n = 0
    for (const k of this.inflight.keys()) if (k.endsWith(`\u0000${spaceId}`)) n++
    return n
  }

  private emit(e: RoundEvent) {
    for (const l of this.roundListeners) l(e)
  }

  connectedPeers(): string[] {
    return [...this.peers.keys()].sort()
  }

  /**
   * A commit in `spaceId`: one round with every peer soon. A local write goes out after
   * `firstMs`, then opens a `debounceMs` window whose further writes share one round at its end
   * (a burst costs one round per window, a lone keystroke almost nothing). When the window's
   * rounds have all ended with at most one write waiting, the window closes early: edits made
   * one after another, each waiting to be seen, then go one round each instead of one per
   * window (the live edit of docs/performance.md "Side by side"). A local write whose changes
   * (`written`) are all the peers lack also goes to them at once, unasked (docs/protocol.md 5d;
   * bounded by a bucket per space), and its round then finds both sides in sync. Changes received
   * from a peer are relayed to the others after `relayMs`, so a full mesh does not echo every
   * change back and forth at once.
   */
  changed(spaceId: string, local = true, written?: { changeIds: readonly string[]; treeIds: readonly string[] }) {
    if (this.stopped) return
    if (!local) {
      if (this.relays.has(spaceId)) return
      this.relays.set(
        spaceId,
        this.timer.after(this.o.relayMs, () => {
          this.relays.delete(spaceId)
          void this.roundsAbout(spaceId)
        }),
      )
      return
    }
    // Pushed only when no earlier write waits unsent: what the peers lack of it is then just it.
    const small = written !== undefined && written.changeIds.length > 0 && written.changeIds.length <= this.o.lonePushMaxChanges
    if (small && !this.unsent.has(spaceId) && this.takePushToken(spaceId)) this.pushLone(spaceId, written.changeIds, written.treeIds)
    else this.unsent.add(spaceId)
    const cool = this.cooling.get(spaceId)
    if (cool) {
      cool.waiting++
      return
    }
    if (this.debounced.has(spaceId)) return
    this.debounced.set(
      spaceId,
      this.timer.after(this.o.firstMs, () => {
        this.debounced.delete(spaceId)
        this.localRound(spaceId)
      }),
    )
  }

  private takePushToken(spaceId: string): boolean {
    const now = this.now()
    const b = this.pushTokens.get(spaceId) ?? { tokens: this.o.lonePushBurst, at: now }
    b.tokens = Math.min(this.o.lonePushBurst, b.tokens + (now - b.at) / this.o.lonePushRefillMs)
    b.at = now
    this.pushTokens.set(spaceId, b)
    if (b.tokens < 1) return false
    b.tokens--
    return true
  }

  private pushLone(spaceId: string, changeIds: readonly string[], treeIds: readonly string[]): void {
    const now = this.now()
    for (const [p, st] of this.peers) if (now >= st.notBefore) void this.driver.pushLone(p, spaceId, changeIds, treeIds)
  }

  private localRound(spaceId: string): void {
    // The round carries every write so far, pushed or not.
    this.unsent.delete(spaceId)
    const rounds = this.roundsAbout(spaceId)
    const end = (early: boolean) => {
      if (this.cooling.get(spaceId) !== cool) return
      if (early && cool.waiting > 1) return
      cool.cancel()
      this.cooling.delete(spaceId)
      if (cool.waiting > 0 && !this.stopped) this.localRound(spaceId)
    }
    const cool = { waiting: 0, cancel: this.timer.after(this.o.debounceMs, () => end(false)) }
    this.cooling.set(spaceId, cool)
    void Promise.allSettled(rounds).then(() => end(true))
  }

  private roundsAbout(spaceId: string): Array<Promise<RoundResult>> {
    return [...this.peers.keys()].map((p) => this.round(p, spaceId))
  }

  /** A round with every connected peer about `spaceId`, ignoring backoff; resolves when all end. */
  async syncNow(spaceId: string): Promise<RoundResult[]> {
    return Promise.all([...this.peers.keys()].map((p) => this.round(p, spaceId, true)))
  }

  /** Rounds with one peer about these spaces (a hub that just took them), in order. */
  syncWith(peer: string, spaceIds: string[]): Promise<void> {
    return this.roundsWith(peer, spaceIds)
  }

  /** Spaces just opened (another device listed them): fetch them from every peer. */
  spacesAdded(spaceIds: string[]) {
    for (const p of this.peers.keys()) void this.roundsWith(p, spaceIds)
  }

  stop() {
    this.stopped = true
    this.stopPeriodic?.()
    for (const c of this.debounced.values()) c()
    for (const c of this.relays.values()) c()
    for (const c of this.cooling.values()) c.cancel()
    for (const s of this.peers.values()) s.retry?.()
  }

  private async roundsWith(peer: string, spaceIds: string[]) {
    // Who the peer is decides which spaces it may hear of: authenticate first.
    await this.driver.authenticate(peer)
    // The tech space goes first: it lists the spaces a second device then asks for.
    for (const s of spaceIds) await this.round(peer, s)
  }

  private round(peer: string, spaceId: string, force = false): Promise<RoundResult> {
    const key = `${peer}\u0000${spaceId}`
    const running = this.inflight.get(key)
    if (running) {
      this.again.add(key)
      return running
    }
    const st = this.peers.get(peer)
    if (!st || this.stopped) return Promise.resolve(skipped('closed'))
    if (!force && this.now() < st.notBefore) return Promise.resolve(skipped('busy'))
    const p = (async () => {
      // A space the peer's account may not read is never named to it: no round, no event.
      if ((await this.driver.mayOpen(peer, spaceId)) === false) {
        // A member removed while connected hears of it now, not at its own next round.
        await this.driver.noticeRemoval(peer, spaceId)
        return skipped('denied')
      }
      this.emit({ peer, spaceId, phase: 'start' })
      const r = await this.driver.syncSpace(peer, spaceId)
      this.record(peer, spaceId, r)
      this.emit({ peer, spaceId, phase: 'end', result: r })
      return r
    })().finally(() => {
      this.inflight.delete(key)
      if (this.again.delete(key)) void this.round(peer, spaceId)
    })
    this.inflight.set(key, p)
    return p
  }

  private record(peer: string, spaceId: string, r: RoundResult) {
    // Statistics only for readers of the space that proved an account, and a bounded number
    // of them per space: peer ids and accounts cost a stranger nothing to mint.
    if (r.outcome === 'denied') return
    let perSpace = this.stats.get(spaceId)
    if (!perSpace) this.stats.set(spaceId, (perSpace = new BoundedMap(this.o.maxPeerStatsPerSpace)))
    const s = perSpace.get(peer) ?? { peerId: peer, lastSyncAt: null, new: 0, changed: 0, rounds: 0, lastErr: null }
    s.rounds++
    s.new += r.changesIn
    s.changed += r.changesOut
    const st = this.peers.get(peer)
    // A space the peer does not hold or share is not a failure of the link, whichever side
    // says so: the peer's answer comes as an `error` outcome with its code.
    if (r.ok || r.outcome === 'unknown_space' || (r.outcome === 'error' && (r.error === 'not_member' || r.error === 'unknown_space'))) {
      if (r.ok) s.lastSyncAt = this.now()
      s.lastErr = r.ok ? null : s.lastErr
      if (st && r.ok) st.failures = 0
    } else if (FAILED.has(r.outcome)) {
      s.lastErr = r.error ?? r.outcome
      if (st) {
        st.failures++
        const delay = backoffDelay(st.failures - 1, this.o.backoffBaseMs, this.o.backoffMaxMs)
        st.notBefore = this.now() + delay
        st.retry?.()
        st.retry = this.timer.after(delay, () => {
          st.retry = undefined
          void this.roundsWith(peer, this.spaces())
        })
      }
    }
    if (perSpace && (r.outcome !== 'unauthenticated' || perSpace.has(peer))) perSpace.set(peer, s)
  }

  private schedulePeriodic() {
    if (this.stopped) return
    this.stopPeriodic = this.timer.after(this.o.periodMs, () => {
      for (const p of this.peers.keys()) void this.roundsWith(p, this.spaces())
      this.schedulePeriodic()
    })
  }
}

/**
 * What a scheduler hears of peers, in the daemon and in the simulator alike: a peer once its
 * link is up and it has proved an account (a stranger gets our challenge and nothing else: no
 * rounds, no state per space), and when its link goes down. Create it after the driver, so the
 * driver has seen an authentication before the scheduler opens rounds on it.
 */
export class ScheduledPeers {
  private readonly peers = new Set<string>()
  private readonly off: () => void

  constructor(
    private readonly scheduler: () => SyncScheduler,
    private readonly session: SyncSession,
    /** Peers whose link is up now. */
    private readonly linked: () => string[],
  ) {
    this.off = session.events.on('authenticated', ({ peer }) => this.up(peer))
  }

  /** A link came up, or a peer authenticated. */
  up(peer: string) {
    if (this.peers.has(peer) || !this.session.identityOf(peer) || !this.linked().includes(peer)) return
    this.peers.add(peer)
    this.scheduler().peerUp(peer)
  }

  down(peer: string) {
    this.peers.delete(peer)
    this.scheduler().peerDown(peer)
  }

  /** A peer whose link came up before the driver listened: its rounds authenticate it. */
  adopt(peer: string) {
    this.peers.add(peer)
    this.scheduler().peerUp(peer)
  }

  stop() {
    this.off()
  }
}

function skipped(outcome: RoundResult['outcome']): RoundResult {
  return { ok: false, outcome, roundTrips: 0, messagesOut: 0, messagesIn: 0, bytesOut: 0, bytesIn: 0, changesOut: 0, changesIn: 0 }
}
