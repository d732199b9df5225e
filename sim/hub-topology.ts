/**
 * The topology of a run with hubs (sim/hub-plan.ts, docs/simulation.md "Hubs"): from the start
 * of the safety phase every direct link between two honest peers is cut, and comes up only in
 * the pair's windows; a peer offline is cut from everyone, hubs and adversaries included. The
 * liveness phase heals every link but those of pairs that never link: they still share data
 * only through a hub.
 */
import type { Simulator } from './simulator.ts'

/** Schedules the links' windows and the offline stretches; cuts every honest pair now. */
export function scheduleHubTopology(sim: Simulator) {
  const plan = sim.cfg.hub
  if (!plan) return
  const { net, sched } = sim
  const id = (i: number) => sim.peers[i].id
  for (const l of plan.links) {
    const [a, b] = [id(l.a), id(l.b)]
    let cut = true
    net.cut(a, b)
    for (const [from, to] of l.windows) {
      sched.at(from, `link ${a}|${b} up`, () => {
        if (sim.phase !== 'safety' || !cut) return
        net.restore(a, b)
        cut = false
      })
      sched.at(to, `link ${a}|${b} down`, () => {
        if (sim.phase !== 'safety' || cut) return
        net.cut(a, b)
        cut = true
      })
    }
  }
  plan.offline.forEach((spans, i) => {
    const p = sim.peers[i]
    for (const [from, to] of spans) {
      let others: string[] = []
      sched.at(from, `offline ${p.id}`, () => {
        if (sim.phase !== 'safety') return
        others = [...sim.everyone(), ...sim.hubs].map((x) => x.id).filter((x) => x !== p.id)
        others.forEach((x) => net.cut(p.id, x))
      })
      sched.at(to, `online ${p.id}`, () => {
        if (sim.phase !== 'safety') return
        others.forEach((x) => net.restore(p.id, x))
        others = []
      })
    }
  })
}

/** Once the liveness phase has healed the network: pairs that never link stay cut. */
export function cutNeverLinked(sim: Simulator) {
  for (const l of sim.cfg.hub?.links ?? []) if (!l.windows.length) sim.net.cut(sim.peers[l.a].id, sim.peers[l.b].id)
}

/** Pairs of honest peers that never had a direct link, by id. */
export function neverLinked(sim: Simulator): Array<[string, string]> {
  return (sim.cfg.hub?.links ?? []).filter((l) => !l.windows.length).map((l) => [sim.peers[l.a].id, sim.peers[l.b].id])
}
