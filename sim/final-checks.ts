/**
 * The final checks (docs/simulation.md, "What is checked"), once the liveness phase stopped:
 * converged members hold the same state, nobody who must not read reaches a key, nothing a
 * hostile peer forged or voided took effect, memory stayed bounded, no acknowledged write is lost.
 */
import { Keyring } from '../sync/acl/keyring.ts'
import { holds, sealLeaks, voidByRemoval } from './checks.ts'
import { checkHubs } from './hub-checks.ts'
import { checkLeaks, checkMemory } from './invariants.ts'
import type { LivenessOutcome } from './liveness.ts'
import { judge, voidOrForgedHeld } from './oracle.ts'
import { accountKey, type SimPeer } from './peer.ts'
import type { Simulator } from './simulator.ts'
import type { AckedWrite } from './workload.ts'
import { textsDiffer } from './ytext-workload.ts'

/** Crafted changes the oracle judged: void (made after their author's removal), and forged or junk. */
export interface Judged {
  void: number
  rejected: number
}

export async function runFinalChecks(sim: Simulator, liveness: LivenessOutcome): Promise<Judged> {
  const { members } = liveness
  const rep = members[0]
  if (liveness.converged) await checkSameState(sim, members)
  // Before the acknowledged writes are checked: that offers a member what it lacks.
  checkHubs(sim, members, liveness.converged)
  checkNeverMembers(sim, rep)
  const leaked = await checkLeaks(sim, 'final', true)
  sim.verdict.leakedReads += leaked
  checkStrangers(sim)
  await checkSealLeaks(sim, rep)
  const judged = await checkHostileCrafts(sim, members)
  checkMemory(sim, 'final')
  for (const w of sim.acked) await checkAckedWrite(sim, w, members)
  checkPeerGuards(sim)
  return judged
}

/**
 * The daemon's peer guard runs in every peer, observe-only: an honest peer never scores enough
 * faults to be backed off by another honest peer (an adversary may be, and usually is). Hubs
 * count as honest both ways: they run the guard too.
 */
function checkPeerGuards(sim: Simulator) {
  const honest = new Set([...sim.peers, ...sim.hubs].map((p) => p.id))
  for (const p of [...sim.peers, ...sim.hubs]) {
    for (const other of p.backedOff) {
      if (!honest.has(other)) continue
      sim.verdict.honestBackedOff++
      sim.verdict.fail(`final: ${p.id}'s peer guard backed off honest peer ${other}`)
    }
  }
}

/** Members with equal heads hold byte-identical state, block texts included. */
async function checkSameState(sim: Simulator, members: SimPeer[]) {
  const { verdict } = sim
  const rep = members[0]
  const d0 = await rep.replica.stateDigest()
  for (const p of members.slice(1)) {
    if ((await p.replica.stateDigest()) !== d0) {
      verdict.diverged = 1
      verdict.fail(`final: ${p.id} holds the same heads as ${rep.id} but a different state`)
    }
    // Block texts edited concurrently (sim/ytext-workload.ts) read the same everywhere.
    for (const [block, a, b] of await textsDiffer(rep.replica, p.replica)) {
      verdict.diverged = 1
      verdict.fail(`final: block ${block} reads ${a.slice(0, 40)} on ${rep.id} but ${b.slice(0, 40)} on ${p.id}`)
    }
  }
}

/** Never-members get nothing at all. */
function checkNeverMembers(sim: Simulator, rep: SimPeer) {
  const { owner, removed, hostile, verdict } = sim
  const everAdded = new Set(sim.timeline.events.map((e) => e.identity))
  for (const p of sim.peers.filter((x) => x.alive && !removed.has(x.account) && !everAdded.has(x.identity) && !owner.replica.acl.current().canRead(x.identity))) {
    // A member adversary may relay what it holds to anyone (replays): then a never-member may
    // hold ciphertext, but must reach no read key.
    const reads = [...rep.replica.acl.current().keys.keys()].filter((k) => new Keyring(rep.replica.acl, p.key).get(k) || p.replica.keyring.get(k))
    // An `add` that is void now (a member adversary's device, or an admin's concurrent with the
    // owner revoking the guest key, accepted a join before the record voiding it was written)
    // wrapped a key of its time to this account, and managers that had not seen what voids it
    // may have rotated to it as to any member: it reads what keys in the past of such grants
    // sealed (writes concurrent with the voiding record), never a key of a record that saw it.
    const acl = rep.replica.acl
    const grants = [...acl.entries.values()].filter((e) => {
      const r = e.record
      if (r.type === 'add') return r.identity === p.identity
      const rotation = r.type === 'rotate' || r.type === 'remove' ? r.rotation : undefined
      return rotation?.keys[p.identity] !== undefined && acl.stateAt(e.prevIds).canRead(p.identity)
    })
    const beyond = reads.filter((k) => !grants.some((g) => acl.precedesOrEquals(k, g.id)))
    if (hostile.length ? beyond.length > 0 : p.replica.known || p.replica.treeIds().length) {
      verdict.leakedReads++
      verdict.fail(
        `non-member ${p.id} ${hostile.length ? `reaches read keys ${beyond.join(',')}${grants.length ? ' beyond the past of the void grants to it' : ''}` : 'holds data of the space'}`,
      )
    }
  }
}

/** Strangers get nothing either (junk roots adversaries made themselves are not the space's data). */
function checkStrangers(sim: Simulator) {
  const junk = new Set(sim.hostile.flatMap((h) => h.ledger.filter((c) => c.what === 'derived').map((c) => c.id)))
  for (const h of sim.hostile.filter((x) => x.spec.role === 'stranger')) {
    const trees = h.peer.replica.treeIds().filter((t) => !junk.has(t))
    if (h.peer.replica.known || trees.length) {
      sim.verdict.leakedReads++
      sim.verdict.fail(`stranger ${h.peer.id} holds data of the space (${h.peer.replica.acl.entries.size} ACL records, trees ${trees.map((t) => t.slice(0, 6)).join(',')})`)
    }
  }
}

/** Seal-time leaks: a write sealed by a peer that had seen a removal, readable by the removed. */
async function checkSealLeaks(sim: Simulator, rep: SimPeer) {
  const everyone = sim.everyone()
  const sealed = sim.acked.filter((w) => w.removedInView?.length)
  if (!sealed.length) return
  const keyOf = (x: string) => everyone.find((p) => p.identity === x)?.key ?? accountKey(-1)
  const own = (x: string) => everyone.filter((p) => p.identity === x && p.alive).map((p) => p.replica)
  for (const l of await sealLeaks(rep.replica, sealed, keyOf, own)) {
    sim.verdict.leakedReads++
    sim.verdict.fail(`final: ${l}`)
  }
}

/** What hostile peers sent: nothing forged or junk held, nothing void in effect. */
async function checkHostileCrafts(sim: Simulator, members: SimPeer[]): Promise<Judged> {
  if (!sim.hostile.length) return { void: 0, rejected: 0 }
  const j = judge(
    sim.hostile.flatMap((h) => h.ledger),
    sim.timeline,
    sim.owner.identity,
  )
  // One line per violation, naming every member where it holds.
  const where = new Map<string, string[]>()
  for (const p of members) {
    for (const l of await voidOrForgedHeld(p.replica, j)) where.set(l, [...(where.get(l) ?? []), p.id])
  }
  for (const [l, ps] of where) {
    sim.verdict.voidApplied++
    sim.verdict.fail(`final: ${l} [on ${ps.join(',')}]`)
  }
  return { void: j.void.length, rejected: j.rejected.length }
}

/**
 * No acknowledged write lost: every converged member holds it in its DAG (applied, or voided by
 * the removal rule), or the write would be refused there (a write by a removed member that the
 * removal rules reject).
 */
async function checkAckedWrite(sim: Simulator, w: AckedWrite, members: SimPeer[]) {
  const { removed, timeline, verdict } = sim
  const rep = members[0]
  const lacking: string[] = []
  for (const p of members) if (!(await holds(p.replica, w.tree, w.id))) lacking.push(p.id)
  if (!lacking.length) return
  const writer = sim.peers.find((p) => p.id === w.peer)
  if (!writer) throw new Error(`acked ${w.kind} ${w.id} names ${w.peer}, which is no honest peer`)
  const raw = (await writer.replica.rawChanges(w.tree, [w.id]))[0]?.raw
  if (!raw) {
    verdict.lostWrites++
    verdict.fail(`acked ${w.kind} ${w.id} by ${w.peer} is gone from its own storage`)
    return
  }
  const report = await rep.replica.ingest([{ id: w.id, raw }])
  const rejected = report.rejected.find((x) => x.id === w.id)
  if (rejected && removed.has(w.account) && (rejected.reason === 'not_member' || rejected.reason === 'stale_acl_head')) return
  // Written by a removed member after its removal existed (it had not seen it): void under
  // rule 1, and a session refuses a removed member's pushes before reading them.
  if (removed.has(w.account) && (report.voided?.includes(w.id) || (w.seq !== undefined && timeline.statusAt(sim.identity(w.account), w.seq, sim.owner.identity) === 'removed')))
    return
  // Written before its removal, but not in the removal's causal past (the remover had not seen
  // it): void by rule 1 as well. (The replica reports voided changes, not voided roots.)
  if (removed.has(w.account) && (await voidByRemoval(rep.replica, w.tree, w.id, raw))) return
  verdict.lostWrites++
  verdict.fail(
    `acked ${w.kind} ${w.id} by ${w.peer} never reached ${lacking.join(',')} (offered to ${rep.id}: ${rejected ? `rejected ${rejected.reason}` : report.accepted.length ? 'accepted' : report.missing.length ? `missing ${report.missing.length} deps` : 'already held'})`,
  )
}
