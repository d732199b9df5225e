/**
 * The liveness phase (docs/simulation.md): faults healed, every crashed peer back, then full
 * rounds until the live members hold identical heads or the bound is reached. Not converging
 * within the bound fails the seed, with a report of why (sim/liveness-report.ts).
 */
import { headsKey } from './checks.ts'
import { hubsDiffer } from './hub-checks.ts'
import { cutNeverLinked } from './hub-topology.ts'
import { diagnoseLiveness, type LivenessFailure, type LivenessRound } from './liveness-report.ts'
import type { SimPeer } from './peer.ts'
import type { Simulator } from './simulator.ts'

const LIVENESS_STAGGER_MS = 40

export interface LivenessOutcome {
  converged: boolean
  /** Full rounds run (every live peer syncing with every other). */
  rounds: number
  /** Live members in the owner's view once the rounds stopped: what the final checks compare. */
  members: SimPeer[]
  /** Why the members did not converge; only when they did not. */
  failure?: LivenessFailure
}

export async function runLivenessPhase(sim: Simulator, maxRounds: number): Promise<LivenessOutcome> {
  await healNetwork(sim)
  const { converged, history } = await runFullRounds(sim, maxRounds)
  const members = sim.memberPeers()
  const rounds = history.length
  if (converged) return { converged, rounds, members }
  reportNotConverged(sim, members, rounds)
  return { converged, rounds, members, failure: await diagnoseLiveness(sim, members, history, maxRounds) }
}

async function healNetwork(sim: Simulator) {
  sim.phase = 'liveness'
  // From here on the runner's own full rounds are the check; the schedulers stop.
  // Joins stop asking too (their retries would keep virtual time running forever): a joiner
  // accepted by then syncs in the full rounds; one still pending stays a non-member.
  for (const p of sim.everyone()) {
    p.stopScheduling()
    p.stopJoin()
  }
  for (const h of sim.hubs) h.stopScheduling()
  sim.net.restoreAll()
  cutNeverLinked(sim)
  sim.net.faults = { ...sim.netFaults, loss: 0, dup: 0 }
  sim.sched.record('liveness: network healed')
  for (const p of sim.peers) {
    if (p.alive) p.storage.armCrash(0)
    else await p.start()
  }
  await sim.sched.run(sim.sched.now + 1000)
}

/** Live members hold identical heads, and every hub holds them too (sim/hub-checks.ts). */
function converged(sim: Simulator): boolean {
  const ms = sim.memberPeers()
  const k = headsKey(ms[0].replica)
  return ms.every((p) => headsKey(p.replica) === k) && !hubsDiffer(sim, ms[0]).length
}

async function runFullRounds(sim: Simulator, maxRounds: number): Promise<{ converged: boolean; history: LivenessRound[] }> {
  const { sched } = sim
  const history: LivenessRound[] = []
  // At least one full round when a member was removed, even if members already agree: a removed
  // member's writes from before its removal reach the space only when it syncs and is refused.
  // Member adversaries count: until the honest removal of one reaches the owner, the owner may
  // hold a void record of its that removes an honest admin, who then looks like no member.
  // Two, in fact: the removal notice (docs/protocol.md 5c) may overtake the refusal it follows on
  // a link that reorders, the refused member then takes it for the exchange's answer and pushes
  // only at its next refusal, which the daemon's next round brings.
  const anyRemoved = sim.removed.size > 0 || sim.removedAccounts().size > 0
  let done = converged(sim)
  while ((!done || (history.length < 2 && anyRemoved)) && history.length < maxRounds) {
    const round = history.length + 1
    sim.rounds.livenessExchanges = []
    const ps = sim.live()
    await hubPasses(sim, round, ps)
    // Each peer opens its exchanges in turn, a few ms apart, so data a round brings in early
    // is already there for the exchanges that follow (instead of every peer sending it at once).
    // Not over links that stay cut (with hubs, pairs that never link).
    ps.forEach((p, i) =>
      sched.after(i * LIVENESS_STAGGER_MS, `round ${round} ${p.id}`, async () => {
        if (!p.alive) return
        for (const q of ps) {
          if (p !== q && q.alive && !sim.net.isCut(p.id, q.id)) sim.rounds.track((await p.driver.begin(q.id, sim.spaceId)).done, sim.phase, { from: p.id, to: q.id })
        }
      }),
    )
    await sched.run()
    done = converged(sim)
    history.push({ round, exchanges: sim.rounds.livenessExchanges, ownerAclRecords: sim.owner.replica.acl.entries.size })
    sched.record(`liveness round ${round}: ${done ? 'converged' : 'not yet'}`)
  }
  return { converged: done, history }
}

/**
 * With hubs, a round starts with two passes through them, one exchange at a time: every live peer
 * syncs with each hub in turn, then each hub with every peer in turn. One at a time, so what a
 * peer brought is at the hub for every peer after it; a peer whose heads changed in its exchange
 * (it may have healed the ACL, a local commit) syncs again at once, as the daemon's scheduler
 * would after a commit. Staggered exchanges through a relay instead let managers heal the key on
 * views that differ every round (each missing the heals the others made in the same round), and
 * they answered each other's rotations forever (seed 4 with 12 peers, 2 adversaries, 1 hub).
 */
async function hubPasses(sim: Simulator, round: number, ps: readonly SimPeer[]) {
  const passes = [
    ...ps.flatMap((p) => sim.hubs.map((h) => ({ from: p.id, to: h.id, driver: p.driver, peer: p }))),
    ...sim.hubs.flatMap((h) => ps.map((q) => ({ from: h.id, to: q.id, driver: h.stack.driver, peer: q }))),
  ]
  for (const x of passes) await exchange(sim, round, x)
}

/** One exchange, run until the network is quiet; once more if the peer's heads changed meanwhile. */
async function exchange(sim: Simulator, round: number, x: { from: string; to: string; driver: SimPeer['driver']; peer: SimPeer }) {
  for (let n = 0; n < 2; n++) {
    const before = headsKey(x.peer.replica)
    sim.sched.after(0, `round ${round} ${x.from}>${x.to}`, async () => {
      sim.rounds.track((await x.driver.begin(x.to, sim.spaceId)).done, sim.phase, { from: x.from, to: x.to })
    })
    await sim.sched.run()
    if (headsKey(x.peer.replica) === before) return
  }
}

/** The failure lines every sweep has printed (they are part of the trace). */
function reportNotConverged(sim: Simulator, members: SimPeer[], rounds: number) {
  const { verdict, spaceId } = sim
  const rep = members[0]
  verdict.diverged = 1
  const k = headsKey(rep.replica)
  const differ = members.filter((p) => headsKey(p.replica) !== k)
  verdict.fail(`not converged after ${rounds} liveness rounds: ${differ.map((p) => p.id).join(',')} differ from ${rep.id}`)
  for (const p of differ.slice(0, 3)) {
    for (const t of [spaceId, ...new Set([...rep.replica.treeIds(), ...p.replica.treeIds()])]) {
      const [a, b] = [rep.replica.heads(t).join(','), p.replica.heads(t).join(',')]
      if (a !== b)
        verdict.fail(`  ${t === spaceId ? 'ACL' : `tree ${t.slice(0, 8)}`}: ${rep.id} has ${rep.replica.heads(t).length} heads [${a.slice(0, 60)}], ${p.id} [${b.slice(0, 60)}]`)
    }
  }
}
