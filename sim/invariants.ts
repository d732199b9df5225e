/**
 * Invariants that hold at any moment, not only once the network has converged: checked at every
 * safety-phase checkpoint and again by the final checks (docs/simulation.md).
 */
import { changesUnder, headsKey, leaks, postRemovalKeys } from './checks.ts'
import { checkHubMemory } from './hub-checks.ts'
import { maxFigures, memoryOf, overBounds } from './memory.ts'
import type { SimPeer } from './peer.ts'
import type { Simulator } from './simulator.ts'

/** Every 5 s of the safety phase. */
export function scheduleCheckpoints(sim: Simulator) {
  for (let t = 5000; t < sim.cfg.safetyMs; t += 5000) sim.sched.at(t, 'checkpoint', () => checkpoint(sim, `checkpoint@${t}`))
}

async function checkpoint(sim: Simulator, label: string) {
  await checkEqualHeadsEqualState(sim, label)
  const leaked = await checkLeaks(sim, label, false)
  sim.verdict.leakedReads += leaked
  checkMemory(sim, label)
}

/** Equal heads must mean byte-identical materialized state. */
async function checkEqualHeadsEqualState(sim: Simulator, label: string) {
  const groups = new Map<string, SimPeer[]>()
  for (const p of sim.live()) {
    const k = headsKey(p.replica)
    groups.set(k, [...(groups.get(k) ?? []), p])
  }
  for (const g of groups.values()) {
    if (g.length < 2) continue
    const d0 = await g[0].replica.stateDigest()
    for (const p of g.slice(1)) {
      if ((await p.replica.stateDigest()) !== d0) {
        sim.verdict.diverged = 1
        sim.verdict.fail(`${label}: ${g[0].id} and ${p.id} hold the same heads but different state`)
      }
    }
  }
}

/** Every live honest peer's parked bytes, derived-root candidates and per-peer state stay within bounds. */
export function checkMemory(sim: Simulator, label: string) {
  const { verdict } = sim
  for (const p of sim.live()) {
    const m = memoryOf(p.replica, p.session)
    verdict.memory = maxFigures(verdict.memory, m)
    for (const o of overBounds(p.id, m)) {
      if (!verdict.firstTimeOver(p.id, o.figure)) continue
      verdict.memoryOver++
      verdict.fail(`${label}: memory: ${o.line}`)
    }
  }
  checkHubMemory(sim, label)
}

/**
 * No removed member reaches a read key introduced at or after its removal, or holds a change
 * sealed under one (`final`: nor a record written by such a change). Returns the leaks found.
 */
export async function checkLeaks(sim: Simulator, label: string, final: boolean): Promise<number> {
  let n = 0
  const gone = sim.removedAccounts()
  if (!gone.size) return 0
  const knowers = sim.live().filter((p) => [...gone.values()].every((ids) => ids.every((id) => p.replica.acl.has(id))))
  if (!knowers.length) return 0
  const full = knowers.reduce((a, b) => (b.replica.acl.entries.size > a.replica.acl.entries.size ? b : a))
  for (const a of gone.keys()) {
    // Re-added (or its removal lost to a more senior admin): it may read again.
    if (full.replica.acl.current().canRead(sim.identity(a))) continue
    const keys = postRemovalKeys(
      full.replica.acl,
      sim.identity(a),
      sim.live().map((p) => p.replica.acl),
    )
    const post = final ? await changesUnder(full.replica, keys) : undefined
    // What hostile peers of other accounts hold, they may have handed it (sim/checks.ts, leaks).
    const hostileHeld = new Set<string>()
    for (const h of sim.hostile) if (h.spec.account !== a) for (const c of await h.peer.replica.allChanges()) hostileHeld.add(c.id)
    for (const p of [...sim.live(), ...sim.hostile.map((h) => h.peer)].filter((x) => x.account === a)) {
      for (const l of await leaks(p.replica, p.key, full.replica.acl, keys, post, hostileHeld)) {
        n++
        sim.verdict.fail(`${label}: removed ${p.id} (account ${a}): ${l}`)
      }
    }
  }
  return n
}
