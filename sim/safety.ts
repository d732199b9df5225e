/**
 * The safety phase (docs/simulation.md): faults on, the workload writes and changes the ACL,
 * adversaries attack, and the invariants are checked as the run goes. Everything is scheduled
 * up front, in a fixed order, so the run's stream is drawn the same way every time.
 */
import { decodeChange } from '../sync/dag/change.ts'
import type { AclWorkload } from './acl-workload.ts'
import { removedInView } from './checks.ts'
import { scheduleFaults } from './faults.ts'
import { scheduleHubTopology } from './hub-topology.ts'
import { scheduleCheckpoints } from './invariants.ts'
import type { Simulator } from './simulator.ts'
import { randomWrite } from './workload.ts'

export async function runSafetyPhase(sim: Simulator, aclWork: AclWorkload) {
  sim.phase = 'safety'
  const T = sim.cfg.safetyMs
  for (let i = 0; i < sim.cfg.writes; i++) scheduleWrite(sim)
  for (const h of sim.hostile) {
    h.schedule(T)
    if (h.spec.role !== 'stranger') aclWork.scheduleAdversary(h.spec, h.identity)
  }
  sim.sharing?.schedule()
  if (sim.cfg.acl.concurrent) aclWork.scheduleHonest()
  else scheduleOwnerAcl(sim)
  scheduleFaults(sim)
  scheduleCheckpoints(sim)
  scheduleHubTopology(sim)
  await sim.sched.run(T)
}

/**
 * One write by a random live peer at a random time. What the writer had seen removed, and its
 * place in the global order, are stamped on the write for the final checks.
 */
function scheduleWrite(sim: Simulator) {
  const { sched, rng, acked, timeline, verdict } = sim
  sched.at(rng.int(sim.cfg.safetyMs), 'write', async () => {
    if (sim.phase !== 'safety') return
    const candidates = sim.live()
    if (!candidates.length) return
    const p = rng.pick(candidates)
    const before = acked.length
    sched.record(`write ${p.id} ${await randomWrite(p, rng, acked, sched.now)}`)
    if (acked.length > before) {
      const seq = timeline.next()
      for (const w of acked.slice(before)) w.seq = seq
    }
    if (acked.length > before && timeline.events.some((e) => e.kind === 'remove')) {
      const seen = removedInView(p.replica, sim.removalsByIdentity())
      if (seen.length) for (const w of acked.slice(before)) w.removedInView = seen
    }
    // Rule 3: a writer never cites a head its own fold skipped (it may cite one that a
    // record it has not seen yet will void: nobody can tell then).
    if (sim.hostile.length || sim.cfg.acl.concurrent) {
      for (const w of acked.slice(before)) {
        const raw = (await p.replica.rawChanges(w.tree, [w.id]))[0]?.raw
        const head = raw ? decodeChange(raw).aclHeadId : ''
        if (head && p.replica.acl.current().isVoid(head)) {
          verdict.voidApplied++
          verdict.fail(`${p.id} wrote ${w.id} citing ACL record ${head}, void in its own fold (rule 3)`)
        }
      }
    }
  })
}

/** With the owner the only honest admin: it adds the late members and removes one or two. */
function scheduleOwnerAcl(sim: Simulator) {
  const { cfg, rng, owner, acked, removed, timeline, sched } = sim
  const T = cfg.safetyMs
  for (const a of cfg.lateMembers) {
    ownerAcl(sim, `add ${a}`, rng.int(Math.floor(T * 0.7)), async () => {
      const id = await owner.replica.addMember(sim.identity(a), 'writer')
      acked.push({ id, tree: sim.spaceId, peer: owner.id, account: 0, kind: 'add', at: sched.now })
      timeline.record({ identity: sim.identity(a), kind: 'add', role: 'writer', id, author: owner.identity })
      return id
    })
  }
  for (let i = 0; i < cfg.removals; i++) {
    ownerAcl(sim, 'remove', Math.floor(T * (0.3 + rng.float() * 0.5)), async () => {
      const st = owner.replica.acl.current()
      const candidates = [...new Set(cfg.accounts)].filter((a) => a !== 0 && !removed.has(a) && st.canRead(sim.identity(a)))
      if (!candidates.length) return undefined
      const a = rng.pick(candidates)
      const id = await owner.replica.removeMember(sim.identity(a))
      removed.set(a, id)
      acked.push({ id, tree: sim.spaceId, peer: owner.id, account: 0, kind: 'remove', at: sched.now })
      timeline.record({ identity: sim.identity(a), kind: 'remove', role: 'none', id, author: owner.identity })
      return `${a} ${id}`
    })
  }
}

/**
 * An owner's ACL change at `at`, retried every second while the owner is down. A change the
 * engine refuses is part of the run (traced by the error's name), not a simulator failure.
 */
function ownerAcl(sim: Simulator, label: string, at: number, change: () => Promise<string | undefined>) {
  const { sched, owner } = sim
  const attempt = (t: number) =>
    sched.at(t, label, async () => {
      if (sim.phase !== 'safety') return
      if (!owner.alive) return void attempt(sched.now + 1000)
      try {
        sched.record(`${label}: ${(await change()) ?? 'nothing to do'}`)
      } catch (err) {
        sched.record(`${label}: failed ${err instanceof Error ? err.name : String(err)}`)
      }
    })
  attempt(at)
}
