/**
 * The state one seed's run shares across its phases (docs/simulation.md, "Phases"): the drawn
 * configuration, the event heap, the network, the peers and what the workload has done so far,
 * and the verdict the checks fill in. `sim/setup.ts` builds it; `sim/safety.ts`,
 * `sim/liveness.ts` and `sim/final-checks.ts` drive it in turn; `sim/runner.ts` composes them.
 */
import type { CryptoProvider } from '../sync/crypto/provider.ts'
import { identityOf } from '../sync/crypto/keys.ts'
import { SYNC_LIMITS } from '../sync/protocol/limits.ts'
import type { RoundResult } from '../sync/protocol/sync-driver.ts'
import type { Adversary } from './adversary.ts'
import { drawConfig, type DrawOptions, type SimConfig } from './config.ts'
import { restartAfterCrash } from './faults.ts'
import { NO_FIGURES, type MemoryFigures } from './memory.ts'
import { SimNetwork, type NetFaults } from './network.ts'
import { accountKey, SimPeer, type PeerContext } from './peer.ts'
import { Prng } from './prng.ts'
import { Scheduler } from './scheduler.ts'
import type { SharingWorkload } from './sharing-workload.ts'
import { SimHub } from './hub.ts'
import { Timeline } from './timeline.ts'
import type { AckedWrite } from './workload.ts'

export type Phase = 'setup' | 'safety' | 'liveness'

export interface SimulatorOptions extends DrawOptions {
  /** Trace lines kept for a failure report (0: none). */
  tail?: number
}

const MAX_FAILURE_LINES = 60

/** What the checks found: counters for the summary, and the first failure lines for the report. */
export class Verdict {
  diverged = 0
  lostWrites = 0
  leakedReads = 0
  voidApplied = 0
  memoryOver = 0
  /** Honest peers whose peer guard backed off another honest peer (the daemon's guard, observe-only here). */
  honestBackedOff = 0
  /** Changes a hub sent to an account that could not read them at its ACL state, and read keys a hub held. */
  hubLeaked = 0
  /** 1 when a hub's heads differ from the converged members' (sim/hub-checks.ts). */
  hubDiverged = 0
  /** Largest figures seen on any honest peer. */
  memory: MemoryFigures = { ...NO_FIGURES }
  readonly failures: string[] = []
  /** (peer, figure) pairs already found over their bound: each counts once, when first seen. */
  private readonly overSeen = new Set<string>()

  constructor(private readonly sched: Scheduler) {}

  fail(line: string) {
    // Every failure counts; a seed's report keeps the first ones.
    if (this.failures.length < MAX_FAILURE_LINES) this.failures.push(line)
    else if (this.failures.length === MAX_FAILURE_LINES) this.failures.push('(more failures omitted)')
    this.sched.record(`FAIL ${line}`)
  }

  /** True the first time a peer's figure is over its bound. */
  firstTimeOver(peer: string, figure: string): boolean {
    const key = `${peer} ${figure}`
    if (this.overSeen.has(key)) return false
    this.overSeen.add(key)
    return true
  }
}

/** An exchange of a liveness round, for the report when the network does not converge. */
export interface LivenessExchange {
  from: string
  to: string
  outcome: string
}

/** Every sync round any peer ran, by phase and outcome. */
export class RoundTally {
  total = 0
  ok = 0
  inSync = 0
  readonly outcomes: Record<string, number> = {}
  /** The exchanges of the liveness round under way (a new list as each round starts). */
  livenessExchanges: LivenessExchange[] = []

  /** Counts `done` once it settles; `pair` names a liveness exchange, kept for the report. */
  track(done: Promise<RoundResult>, phase: Phase, pair?: { from: string; to: string }) {
    this.total++
    void done.then((r) => {
      if (r.ok) this.ok++
      if (r.outcome === 'in_sync') this.inSync++
      const outcome = `${r.outcome}${r.error ? ':' + r.error : ''}`
      const k = `${phase}:${outcome}`
      this.outcomes[k] = (this.outcomes[k] ?? 0) + 1
      if (pair) this.livenessExchanges.push({ ...pair, outcome })
    })
  }
}

export class Simulator {
  phase: Phase = 'setup'
  readonly cfg: SimConfig
  readonly sched: Scheduler
  /** The run's own stream: workload, faults, restarts (docs/simulation.md, "Determinism"). */
  readonly rng: Prng
  readonly verdict: Verdict
  /** The network's faults for the safety phase; the liveness phase keeps delay and reordering. */
  readonly netFaults: NetFaults
  readonly net: SimNetwork
  readonly rounds = new RoundTally()
  readonly ctx: PeerContext
  readonly peers: SimPeer[]
  readonly owner: SimPeer
  /** Every write the engine acknowledged: none may be lost. */
  readonly acked: AckedWrite[] = []
  /** Honest accounts an honest record removed, with that record. */
  readonly removed = new Map<number, string>()
  readonly timeline = new Timeline()
  hostile: Adversary[] = []
  /** Hub peers `h<k>` (sim/hub.ts); none without `--hubs`. */
  readonly hubs: SimHub[] = []
  sharing: SharingWorkload | undefined
  private readonly identities = new Map<number, string>()

  constructor(
    readonly seed: number,
    opts: SimulatorOptions,
    readonly crypto: CryptoProvider,
  ) {
    this.cfg = drawConfig(seed, opts)
    this.sched = new Scheduler(opts.tail ?? 0)
    this.rng = new Prng(seed, 2)
    this.verdict = new Verdict(this.sched)
    const cfg = this.cfg
    // Without hostile peers or concurrent admins the trace is what it was before they existed.
    const { acl: _acl, adversaries: _adv, sharing: _sharing, ...plain } = cfg
    this.sched.record(`config ${JSON.stringify(cfg.adversaries.length || cfg.acl.concurrent ? cfg : plain)}`)
    this.netFaults = { loss: cfg.loss, dup: cfg.dup, delayMin: cfg.delayMin, delayMax: cfg.delayMax, ordered: !cfg.faults.includes('reorder') }
    this.net = new SimNetwork(this.sched, new Prng(seed, 3), this.netFaults, SYNC_LIMITS.maxMessageBytes)
    this.ctx = {
      sched: this.sched,
      net: this.net,
      crypto,
      spaceId: '',
      roundTimeoutMs: 8000,
      // Rounds run when the daemon's scheduler decides, from setup to the end of the safety phase.
      scheduling: () => (this.phase === 'liveness' ? undefined : { periodMs: cfg.periodMs }),
      onRound: (_p, r) => this.rounds.track(Promise.resolve(r), this.phase),
      onJoinStatus: (p, e) => this.sharing?.onJoinStatus(p, e),
      onCrash: (p) => restartAfterCrash(this, p),
    }
    this.peers = cfg.accounts.map((a, i) => new SimPeer(`p${i}`, i, a, cfg.skews[i], new Prng(seed, 100 + i), () => this.ctx))
    this.owner = this.peers[0]
    if (cfg.hub) this.createHubs(cfg.hub.accounts)
  }

  /**
   * Hubs, each with its own key and seeded env (streams 500 + k), admitting every honest account
   * by its allowlist. Every honest peer's session takes them for custodians of the space, and
   * registers the space with each of them the first time it opens its replica.
   */
  private createHubs(accounts: readonly number[]) {
    const allowlist = [...new Set(this.cfg.accounts)].map((a) => this.identity(a))
    const onLeak = (line: string) => {
      this.verdict.hubLeaked++
      this.verdict.fail(`hub leak: ${line}`)
    }
    accounts.forEach((a, k) => this.hubs.push(new SimHub(`h${k}`, a, new Prng(this.seed, 500 + k), () => this.ctx, allowlist, onLeak)))
    const ids = this.hubs.map((h) => h.identity)
    for (const p of this.peers) p.custodians = ids
    const registered = new Set<SimPeer>()
    this.ctx.onOpened = async (p) => {
      if (registered.has(p) || !this.peers.includes(p)) return
      registered.add(p)
      for (const h of this.hubs) await h.register(p.identity, this.spaceId)
    }
  }

  get spaceId(): string {
    return this.ctx.spaceId
  }

  identity(account: number): string {
    let id = this.identities.get(account)
    if (!id) this.identities.set(account, (id = identityOf(accountKey(account).publicKey)))
    return id
  }

  inSafety(): boolean {
    return this.phase === 'safety'
  }

  /** Honest peers up now. */
  live(): SimPeer[] {
    return this.peers.filter((p) => p.alive)
  }

  /** Honest peers, then the adversaries' own. */
  everyone(): SimPeer[] {
    return [...this.peers, ...this.hostile.map((h) => h.peer)]
  }

  /** Live honest peers the owner's ACL lets read. */
  memberPeers(): SimPeer[] {
    const st = this.owner.replica.acl.current()
    return this.peers.filter((p) => p.alive && st.canRead(p.identity))
  }

  /** Honest removal records by the identity they remove (sim/checks.ts, removedInView). */
  removalsByIdentity(): Map<string, string[]> {
    const m = new Map<string, string[]>()
    for (const e of this.timeline.events) if (e.kind === 'remove') m.set(e.identity, [...(m.get(e.identity) ?? []), e.id])
    return m
  }

  /** Accounts some honest record removed (honest ones, and member adversaries), with those records. */
  removedAccounts(): Map<number, string[]> {
    const m = new Map<number, string[]>()
    for (const [a, id] of this.removed) m.set(a, [id])
    for (const h of this.hostile) {
      const ids = this.timeline.events.filter((e) => e.kind === 'remove' && e.identity === h.identity).map((e) => e.id)
      if (ids.length) m.set(h.spec.account, ids)
    }
    return m
  }
}
