/**
 * Setup (docs/simulation.md, "What a run does"): the owner creates the space, adds the initial
 * members, the member adversaries and the objects, and every peer joins the network. No faults
 * yet: the safety phase turns them on.
 */
import type { GrantRole } from '../sync/acl/records.ts'
import { AclWorkload } from './acl-workload.ts'
import { Adversary } from './adversary.ts'
import { MEMORY_BOUNDS } from './memory.ts'
import { SimPeer } from './peer.ts'
import { Prng } from './prng.ts'
import { SharingWorkload } from './sharing-workload.ts'
import type { Simulator } from './simulator.ts'

/** Builds the space and the peers; returns the ACL workload the safety phase schedules. */
export async function setUp(sim: Simulator): Promise<AclWorkload> {
  const { cfg, crypto, owner, seed } = sim
  sim.ctx.spaceId = await owner.createSpace(crypto)
  for (const m of cfg.initialMembers) await ownerAdds(sim, m.account, m.role)
  const aclWork = new AclWorkload({
    sched: sim.sched,
    net: sim.net,
    r: new Prng(seed, 5),
    cfg,
    peers: sim.peers,
    owner,
    spaceId: sim.spaceId,
    acked: sim.acked,
    removed: sim.removed,
    timeline: sim.timeline,
    identity: (a) => sim.identity(a),
    inSafety: () => sim.inSafety(),
    // An admin cut off from everyone is cut off from the hubs too.
    allIds: () => [...sim.everyone(), ...sim.hubs].map((p) => p.id),
  })
  if (cfg.acl.concurrent) await aclWork.grantAdmins()
  sim.sharing = cfg.sharing.joiners.length
    ? new SharingWorkload({
        sched: sim.sched,
        r: new Prng(seed, 7),
        cfg,
        crypto,
        peers: sim.peers,
        owner,
        spaceId: sim.spaceId,
        acked: sim.acked,
        removed: sim.removed,
        timeline: sim.timeline,
        identity: (a) => sim.identity(a),
        inSafety: () => sim.inSafety(),
      })
    : undefined
  // Member adversaries are added by the owner (only the owner grants admin).
  for (const s of cfg.adversaries) if (s.role !== 'stranger') await ownerAdds(sim, s.account, s.role)
  for (let i = 0; i < cfg.objects; i++) {
    const o = await owner.replica.createObject()
    sim.acked.push({ id: o, tree: o, peer: owner.id, account: 0, kind: 'create', at: 0 })
  }
  // Hubs first: a peer registers the space with them as it opens its replica.
  for (const h of sim.hubs) h.start()
  for (const p of sim.peers) await p.start()
  sim.hostile = createAdversaries(sim)
  for (const h of sim.hostile) await h.start()
  return aclWork
}

async function ownerAdds(sim: Simulator, account: number, role: GrantRole) {
  const { owner } = sim
  const id = await owner.replica.addMember(sim.identity(account), role)
  sim.acked.push({ id, tree: sim.spaceId, peer: owner.id, account: 0, kind: 'add', at: 0 })
  sim.timeline.record({ identity: sim.identity(account), kind: 'add', role, id, author: owner.identity })
}

/** Hostile peers, each on a device of its own account, with streams of their own. */
function createAdversaries(sim: Simulator): Adversary[] {
  const { cfg, seed, crypto } = sim
  return cfg.adversaries.map((s) => {
    const peer = new SimPeer(`x${s.index}`, cfg.peers + s.index, s.account, 0, new Prng(seed, 300 + s.index), () => sim.ctx)
    return new Adversary(s, peer, new Prng(seed, 400 + s.index), {
      sched: sim.sched,
      net: sim.net,
      crypto,
      spaceId: sim.spaceId,
      timeline: sim.timeline,
      owner: sim.owner.identity,
      honest: () => sim.peers,
      accomplices: () => cfg.adversaries.map((a) => sim.identity(a.account)),
      inSafety: () => sim.inSafety(),
      sybilStormSize: MEMORY_BOUNDS.peerStates + 64,
    })
  })
}
