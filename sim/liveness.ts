/**
 * The liveness phase (docs/simulation.md): faults healed, every crashed peer back, then full
 * rounds until the live members hold identical heads or the bound is reached. Not converging
 * within the bound fails the seed, with a report of why (sim/liveness-report.ts).
 */
import { headsKey } from './checks.ts'
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
  sim.net.restoreAll()
  sim.net.faults = { ...sim.netFaults, loss: 0, dup: 0 }
  sim.sched.record('liveness: network healed')
  for (const p of sim.peers) {
    if (p.alive) p.storage.armCrash(0)
    else await p.start()
  }
  await sim.sched.run(sim.sched.now + 1000)
}

function converged(sim: Simulator): boolean {
  const ms = sim.memberPeers()
  const k = headsKey(ms[0].replica)
  return ms.every((p) => headsKey(p.replica) === k)
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
    // Each peer opens its exchanges in turn, a few ms apart, so data a round brings in early
    // is already there for the exchanges that follow (instead of every peer sending it at once).
    ps.forEach((p, i) =>
      sched.after(i * LIVENESS_STAGGER_MS, `round ${round} ${p.id}`, async () => {
        if (!p.alive) return
        for (const q of ps) if (p !== q && q.alive) sim.rounds.track((await p.driver.begin(q.id, sim.spaceId)).done, sim.phase, { from: p.id, to: q.id })
      }),
    )
    await sched.run()
    done = converged(sim)
    history.push({ round, exchanges: sim.rounds.livenessExchanges, ownerAclRecords: sim.owner.replica.acl.entries.size })
    sched.record(`liveness round ${round}: ${done ? 'converged' : 'not yet'}`)
  }
  return { converged: done, history }
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
