/**
 * What is checked of hubs (docs/simulation.md, "Hubs"), besides what they send (sim/hub.ts
 * inspects every frame): once the members converged, every hub holds exactly their heads, tree
 * by tree (`hubDiverged`); a hub never holds a read key (`hubLeaked`); its memory stays within
 * the bounds honest peers are held to, and its peer guard never backs off an honest peer.
 */
import type { SpaceReplica } from '../sync/replica/space-replica.ts'
import { memoryOf, maxFigures, overBounds } from './memory.ts'
import type { SimPeer } from './peer.ts'
import type { Simulator } from './simulator.ts'

/**
 * Trees where a hub's heads differ from `rep`'s, one line each (empty: the hub holds what the
 * member does). A hub keeps the unsigned derived roots adversaries made up as they come (it
 * cannot tell them from real ones without reading payloads, ReplicaDeps.keyless), and members
 * drop them: those trees are not counted.
 */
export function hubsDiffer(sim: Simulator, rep: SimPeer): string[] {
  if (!sim.hubs.length) return []
  const junk = new Set(sim.hostile.flatMap((h) => h.ledger.filter((c) => c.what === 'derived').map((c) => c.id)))
  const out: string[] = []
  for (const h of sim.hubs) {
    const kept = h.replica
    if (!kept) {
      out.push(`${h.id} keeps no replica of the space`)
      continue
    }
    out.push(...differ(h.id, kept, rep, junk))
  }
  return out
}

function differ(hub: string, kept: SpaceReplica, rep: SimPeer, junk: ReadonlySet<string>): string[] {
  const out: string[] = []
  const r = rep.replica
  const name = (t: string) => (t === r.spaceId ? 'ACL' : `tree ${t.slice(0, 8)}`)
  for (const t of [r.spaceId, ...r.treeIds()]) {
    const [a, b] = [r.heads(t).join(','), kept.heads(t).join(',')]
    if (a !== b) out.push(`${hub} ${name(t)}: ${kept.heads(t).length} heads [${b.slice(0, 40)}], ${rep.id} [${a.slice(0, 40)}]`)
  }
  const held = new Set(r.treeIds())
  for (const t of kept.treeIds()) if (!held.has(t) && !junk.has(t)) out.push(`${hub} holds ${name(t)}, which ${rep.id} does not`)
  return out
}

/** The final checks of hubs; `members` are the live members the liveness phase compared. */
export function checkHubs(sim: Simulator, members: readonly SimPeer[], converged: boolean) {
  const { verdict } = sim
  if (converged && members.length) {
    const lines = hubsDiffer(sim, members[0])
    if (lines.length) {
      verdict.hubDiverged = 1
      verdict.fail(`final: a hub did not converge with the members`)
      for (const l of lines.slice(0, 6)) verdict.fail(`  ${l}`)
    }
  }
  for (const h of sim.hubs) {
    const kept = h.replica
    if (kept?.known) {
      const keys = new Set([...kept.acl.current().keys.keys()])
      const held = [...keys].filter((k) => kept.keyring.get(k))
      if (held.length) {
        verdict.hubLeaked += held.length
        verdict.fail(`final: ${h.id} holds read keys ${held.join(',')}`)
      }
    }
  }
}

/** A hub's replica and session stay within the bounds honest peers are held to. */
export function checkHubMemory(sim: Simulator, label: string) {
  const { verdict } = sim
  for (const h of sim.hubs) {
    const kept = h.replica
    if (!kept) continue
    const m = memoryOf(kept, h.stack.session)
    verdict.memory = maxFigures(verdict.memory, m)
    for (const o of overBounds(h.id, m)) {
      if (!verdict.firstTimeOver(h.id, o.figure)) continue
      verdict.memoryOver++
      verdict.fail(`${label}: memory: ${o.line}`)
    }
  }
}
