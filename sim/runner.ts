/**
 * One seed's run, in the manner of TigerBeetle's VOPR: setup (sim/setup.ts), a safety phase with
 * faults on and invariants checked as it goes (sim/safety.ts), a liveness phase on a healed
 * network that must converge within a bound (sim/liveness.ts), and the final checks
 * (sim/final-checks.ts). The state they share is a `Simulator` (sim/simulator.ts). See
 * docs/simulation.md, "Phases".
 */
import { defaultCryptoProvider, type CryptoProvider } from '../sync/crypto/provider.ts'
import type { Adversary } from './adversary.ts'
import { ATTACK_KINDS, type AttackKind } from './adversary-types.ts'
import type { FaultKind, SimConfig } from './config.ts'
import { headsKey } from './checks.ts'
import { runFinalChecks, type Judged } from './final-checks.ts'
import { neverLinked } from './hub-topology.ts'
import type { LivenessFailure } from './liveness-report.ts'
import { runLivenessPhase, type LivenessOutcome } from './liveness.ts'
import type { MemoryFigures } from './memory.ts'
import type { SimPeer } from './peer.ts'
import { runSafetyPhase } from './safety.ts'
import { setUp } from './setup.ts'
import type { SharingWorkload } from './sharing-workload.ts'
import { Simulator, type SimulatorOptions } from './simulator.ts'

export interface RunOptions extends SimulatorOptions {
  /** Liveness rounds allowed before a run counts as diverged. */
  maxLivenessRounds?: number
  /** Signature provider (default: the platform's, as the daemon uses). */
  crypto?: CryptoProvider
  /** Called once the final checks ran, with every peer (for debugging a seed from code). */
  inspect?: (honest: readonly SimPeer[], hostile: readonly Adversary[]) => void | Promise<void>
}

export interface SeedResult {
  seed: number
  peers: number
  faults: FaultKind[]
  /** 1 when the live members did not reach identical heads and state, or when equal heads ever
   *  came with unequal state. */
  diverged: number
  lostWrites: number
  leakedReads: number
  /** Forged, tampered or junk changes held, and void changes or ACL records that took effect. */
  voidApplied: number
  /** Times an honest peer's parked bytes, derived-root candidates or per-peer state went over its bound. */
  memoryOver: number
  /** Backoffs of an honest peer by another's peer guard (must be 0). */
  honestBackedOff: number
  /** Changes a hub sent to an account that could not read them, and read keys a hub held (must be 0). */
  hubLeaked: number
  /** 1 when a hub's heads differ from the converged members' (must be 0). */
  hubDiverged: number
  /** What the hubs did; only with hubs. */
  hub?: HubFigures
  /** Backoffs of adversaries by honest peers' guards: the guard at work. */
  hostileBackedOff: number
  /** Largest figures seen on any honest peer. */
  memory: MemoryFigures
  /** Hostile actions by kind. */
  attacks: Partial<Record<AttackKind, number>>
  adversaries: number
  /** Full rounds the liveness phase needed (every live peer syncing with every other). */
  livenessRounds: number
  /** Why the live members did not converge within the bound; only when they did not. */
  livenessFailure?: LivenessFailure
  ackedWrites: number
  traceHash: string
  failures: string[]
  tail: string[]
  stats: {
    events: number
    virtualMs: number
    messages: number
    bytes: number
    lost: number
    duplicated: number
    cutDrops: number
    crashes: number
    rounds: number
    roundsOk: number
    roundsInSync: number
    removed: number
    members: number
    dropped: Record<string, number>
    rejected: Record<string, number>
    outcomes: Record<string, number>
    /** Crafted changes the oracle judged void (made after their author's removal), and forged or junk ones. */
    judgedVoid: number
    judgedRejected: number
    /** Invites minted, joins asked, accepted, declined and withdrawn, guest keys revoked (sim/sharing-workload.ts). */
    sharing?: SharingWorkload['stats']
  }
}

/** A run's hub figures (sim/hub.ts). */
export interface HubFigures {
  hubs: number
  /** Changes the hubs sent to peers in steps, and took in from them. */
  relayed: number
  kept: number
  /** Changes honest peers accepted from a hub, and from another honest peer directly. */
  viaHub: number
  direct: number
  /** Pairs of converged members that never had a direct link, and members that linked to no honest peer at all. */
  neverLinkedPairs: number
  hubOnlyMembers: number
  /** Of those, members that accepted changes and all of them from hubs. */
  hubOnlyFed: number
}

const DEFAULT_LIVENESS_ROUNDS = 8

export async function runSeed(seed: number, opts: RunOptions): Promise<SeedResult> {
  const sim = new Simulator(seed, opts, opts.crypto ?? (await defaultCryptoProvider()))
  const aclWork = await setUp(sim)
  await runSafetyPhase(sim, aclWork)
  const liveness = await runLivenessPhase(sim, opts.maxLivenessRounds ?? DEFAULT_LIVENESS_ROUNDS)
  const judged = await runFinalChecks(sim, liveness)
  const counters = sessionCounters(sim.peers)
  for (const p of sim.peers) if (p.alive) p.foldAccepted()
  sim.sharing?.finish()
  await opts.inspect?.(sim.peers, sim.hostile)
  await traceOutcome(sim)
  return seedResult(sim, liveness, judged, counters)
}

/** The last trace lines: every honest peer's final state, and the counters. */
async function traceOutcome(sim: Simulator) {
  const { sched, verdict: v } = sim
  for (const p of sim.peers) sched.record(`final ${p.id} ${p.alive ? await p.replica.stateDigest() : 'down'}`)
  for (const h of sim.hubs) sched.record(`final ${h.id} ${h.replica ? headsKey(h.replica) : 'none'}`)
  const hubs = sim.hubs.length ? ` hubLeaked=${v.hubLeaked} hubDiverged=${v.hubDiverged}` : ''
  sched.record(`result diverged=${v.diverged} lost=${v.lostWrites} leaked=${v.leakedReads}${sim.hostile.length ? ` void=${v.voidApplied} memory=${v.memoryOver}` : ''}${hubs}`)
}

function hostileBackoffs(sim: Simulator): number {
  const hostile = new Set(sim.hostile.map((h) => h.peer.id))
  return [...sim.peers, ...sim.hubs].reduce((n, p) => n + [...p.backedOff].filter((x) => hostile.has(x)).length, 0)
}

/** The hub figures of a run with hubs: relays, and which deliveries only a hub could make. */
function hubFigures(sim: Simulator, members: readonly SimPeer[]): HubFigures {
  const ids = new Set(members.map((p) => p.id))
  const never = neverLinked(sim).filter(([a, b]) => ids.has(a) && ids.has(b))
  const alone = new Set((sim.cfg.hub?.hubOnly ?? []).map((i) => sim.peers[i].id))
  const hubOnly = members.filter((p) => alone.has(p.id))
  return {
    hubs: sim.hubs.length,
    relayed: sim.hubs.reduce((n, h) => n + h.stats.changesOut, 0),
    kept: sim.hubs.reduce((n, h) => n + h.changesIn(), 0),
    viaHub: sim.peers.reduce((n, p) => n + p.accepted.viaHub, 0),
    direct: sim.peers.reduce((n, p) => n + p.accepted.direct, 0),
    neverLinkedPairs: never.length,
    hubOnlyMembers: hubOnly.length,
    hubOnlyFed: hubOnly.filter((p) => p.accepted.viaHub > 0 && p.accepted.direct === 0).length,
  }
}

function seedResult(sim: Simulator, liveness: LivenessOutcome, judged: Judged, counters: SessionCounters): SeedResult {
  const { cfg, sched, net, rounds, verdict: v } = sim
  return {
    seed: sim.seed,
    peers: cfg.peers,
    faults: cfg.faults,
    diverged: v.diverged,
    lostWrites: v.lostWrites,
    leakedReads: v.leakedReads,
    voidApplied: v.voidApplied,
    memoryOver: v.memoryOver,
    honestBackedOff: v.honestBackedOff,
    hubLeaked: v.hubLeaked,
    hubDiverged: v.hubDiverged,
    ...(sim.hubs.length ? { hub: hubFigures(sim, liveness.members) } : {}),
    hostileBackedOff: hostileBackoffs(sim),
    memory: v.memory,
    attacks: attacksOf(sim.hostile),
    adversaries: sim.hostile.length,
    livenessRounds: liveness.rounds,
    ...(liveness.failure ? { livenessFailure: liveness.failure } : {}),
    ackedWrites: sim.acked.length,
    traceHash: sched.traceHash(),
    failures: v.failures,
    tail: [...sched.tail],
    stats: {
      events: sched.executed,
      virtualMs: sched.now,
      messages: net.stats.sent,
      bytes: net.stats.bytes,
      lost: net.stats.lost,
      duplicated: net.stats.duplicated,
      cutDrops: net.stats.cut,
      crashes: sim.peers.reduce((n, p) => n + p.crashes, 0),
      rounds: rounds.total,
      roundsOk: rounds.ok,
      roundsInSync: rounds.inSync,
      removed: sim.removed.size,
      members: liveness.members.length,
      dropped: counters.dropped,
      rejected: counters.rejected,
      outcomes: rounds.outcomes,
      judgedVoid: judged.void,
      judgedRejected: judged.rejected,
      ...(sim.sharing ? { sharing: { ...sim.sharing.stats } } : {}),
    },
  }
}

interface SessionCounters {
  dropped: Record<string, number>
  rejected: Record<string, number>
}

/** Messages honest peers dropped and changes they refused, by reason, summed over their sessions. */
function sessionCounters(peers: readonly SimPeer[]): SessionCounters {
  const dropped: Record<string, number> = {}
  const rejected: Record<string, number> = {}
  for (const p of peers) {
    for (const c of p.session.allCounters().values()) {
      for (const [k, v] of Object.entries(c.dropped)) dropped[k] = (dropped[k] ?? 0) + v
      for (const [k, v] of Object.entries(c.rejected)) rejected[k] = (rejected[k] ?? 0) + v
    }
  }
  return { dropped, rejected }
}

const isAttackKind = (k: string): k is AttackKind => ATTACK_KINDS.some((a) => a === k)

/** Hostile actions by kind, in the order they first appear (the summary prints them so). */
function attacksOf(hostile: readonly Adversary[]): Partial<Record<AttackKind, number>> {
  const attacks: Partial<Record<AttackKind, number>> = {}
  for (const h of hostile) for (const [k, v] of Object.entries(h.counts)) if (isAttackKind(k)) attacks[k] = (attacks[k] ?? 0) + v
  return attacks
}

export type { SimConfig }
