/**
 * Why a seed's live members did not converge within the liveness bound, from what the run
 * holds once the rounds stopped: who agrees with whom, which heads each side lacks, how the
 * exchanges of every round ended, who still parks or refused changes, and whose ACL sees other
 * members than the owner's. Read-only: building it records nothing in the trace. Plain data, so
 * it crosses from a worker thread to the CLI (sim/cli.ts prints `describeLivenessFailure`).
 */
import { headsKey, holds } from './checks.ts'
import type { SimPeer } from './peer.ts'
import type { LivenessExchange, Simulator } from './simulator.ts'

export interface LivenessRound {
  round: number
  exchanges: LivenessExchange[]
  /** Records in the owner's ACL after the round: a count that keeps growing means admins keep writing. */
  ownerAclRecords: number
}

export interface TreeDisagreement {
  /** The tree id, the space id for the ACL. */
  tree: string
  acl: boolean
  /** Each group's heads on this tree (same order as `LivenessFailure.groups`). */
  heads: string[][]
  /** Heads some group holds that this group does not hold at all (not merely built on). */
  lacking: Array<{ group: number; ids: string[] }>
}

export interface LivenessFailure {
  rounds: number
  maxRounds: number
  /** Live members by the DAG they hold (identical heads on every tree), in the order of their first member. */
  groups: string[][]
  trees: TreeDisagreement[]
  history: Array<{ round: number; outcomes: Record<string, number>; ownerAclRecords: number }>
  /** Exchanges between members in the last round that ended neither in sync nor synced (non-members are refused by design). */
  failedExchanges: LivenessExchange[]
  /** Live members whose own ACL lets other live peers read than the owner's does (`readers` absent: it does not know the space). */
  views: Array<{ peer: string; readers?: string[] }>
  ownerReaders: string[]
  /** Changes a member still parks, waiting for what they depend on. */
  parked: Array<{ peer: string; changes: number; bytes: number }>
  /** Changes a member refused and messages it dropped, since it last started. */
  refused: Array<{ peer: string; rejected: Record<string, number>; dropped: Record<string, number> }>
  /** Honest peers down, and live honest peers the owner does not count as members. */
  down: string[]
  nonMembers: string[]
  /** Whether anything was still queued (frames in flight, timers) when the rounds stopped. */
  eventsQueued: boolean
}

const OK_OUTCOMES = new Set(['in_sync', 'synced'])

export async function diagnoseLiveness(sim: Simulator, members: SimPeer[], history: LivenessRound[], maxRounds: number): Promise<LivenessFailure> {
  const groups = groupByHeads(members)
  const readers = (p: SimPeer) => {
    if (!p.replica.known) return undefined
    const st = p.replica.acl.current()
    return sim
      .live()
      .filter((q) => st.canRead(q.identity))
      .map((q) => q.id)
  }
  const ownerReaders = readers(sim.owner) ?? []
  const memberIds = new Set(members.map((p) => p.id))
  const last = history.at(-1)?.exchanges ?? []
  return {
    rounds: history.length,
    maxRounds,
    groups: groups.map((g) => g.map((p) => p.id)),
    trees: await disagreements(sim, groups),
    history: history.map((h) => ({ round: h.round, outcomes: countOutcomes(h.exchanges), ownerAclRecords: h.ownerAclRecords })),
    failedExchanges: last.filter((e) => !OK_OUTCOMES.has(e.outcome) && memberIds.has(e.from) && memberIds.has(e.to)),
    views: members.map((p) => ({ peer: p.id, readers: readers(p) })).filter((v) => v.readers?.join() !== ownerReaders.join()),
    ownerReaders,
    parked: members.map((p) => ({ peer: p.id, ...parkedOn(p) })).filter((x) => x.changes > 0),
    refused: members.map((p) => ({ peer: p.id, ...sessionRefusals(p) })).filter((x) => Object.keys(x.rejected).length + Object.keys(x.dropped).length > 0),
    down: sim.peers.filter((p) => !p.alive).map((p) => p.id),
    nonMembers: sim
      .live()
      .filter((p) => !members.includes(p))
      .map((p) => p.id),
    eventsQueued: !sim.sched.idle(),
  }
}

function groupByHeads(members: SimPeer[]): SimPeer[][] {
  const groups = new Map<string, SimPeer[]>()
  for (const p of members) {
    const k = headsKey(p.replica)
    groups.set(k, [...(groups.get(k) ?? []), p])
  }
  return [...groups.values()]
}

/** Trees whose heads differ between groups, with what each group lacks outright. */
async function disagreements(sim: Simulator, groups: SimPeer[][]): Promise<TreeDisagreement[]> {
  const reps = groups.map((g) => g[0])
  const trees = [sim.spaceId, ...new Set(reps.flatMap((p) => p.replica.treeIds()))]
  const out: TreeDisagreement[] = []
  for (const tree of trees) {
    const heads = reps.map((p) => p.replica.heads(tree))
    if (heads.every((h) => h.join() === heads[0].join())) continue
    const all = [...new Set(heads.flat())]
    const lacking: TreeDisagreement['lacking'] = []
    for (const [group, p] of reps.entries()) {
      const ids: string[] = []
      for (const id of all) if (!(await holds(p.replica, tree, id))) ids.push(id)
      if (ids.length) lacking.push({ group, ids })
    }
    out.push({ tree, acl: tree === sim.spaceId, heads, lacking })
  }
  return out
}

function parkedOn(p: SimPeer): { changes: number; bytes: number } {
  const m = p.replica.memory()
  return { changes: m.parkedChanges, bytes: m.parkedBytes }
}

function countOutcomes(exchanges: LivenessExchange[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const e of exchanges) out[e.outcome] = (out[e.outcome] ?? 0) + 1
  return out
}

function sessionRefusals(p: SimPeer): { rejected: Record<string, number>; dropped: Record<string, number> } {
  const rejected: Record<string, number> = {}
  const dropped: Record<string, number> = {}
  for (const c of p.session.allCounters().values()) {
    for (const [k, v] of Object.entries(c.rejected)) rejected[k] = (rejected[k] ?? 0) + v
    for (const [k, v] of Object.entries(c.dropped)) dropped[k] = (dropped[k] ?? 0) + v
  }
  return { rejected, dropped }
}

const MAX_LISTED = 12
const short = (id: string) => id.slice(0, 8)
const list = (xs: readonly string[]) => (xs.length > MAX_LISTED ? `${xs.slice(0, MAX_LISTED).join(',')},... (${xs.length})` : xs.join(','))
const counts = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${k}:${v}`)
    .join(' ')

/** The report as lines for a terminal (sim/cli.ts indents them under the seed's failures). */
export function describeLivenessFailure(f: LivenessFailure): string[] {
  const group = (i: number) => `{${list(f.groups[i])}}`
  const lines = [`liveness: ${f.groups.length} groups of members after ${f.rounds} of at most ${f.maxRounds} full rounds: ${f.groups.map((_, i) => group(i)).join(' ')}`]
  for (const t of f.trees.slice(0, MAX_LISTED)) {
    const held = t.heads.map((h, i) => `${group(i)} ${h.length} heads [${list(h.map(short))}]`).join('; ')
    const lacks = t.lacking.map((l) => `${group(l.group)} lacks ${list(l.ids.map(short))}`).join('; ')
    lines.push(`  ${t.acl ? 'ACL' : `tree ${short(t.tree)}`}: ${held}${lacks ? ` | ${lacks}` : ' | every head held everywhere (heads differ, DAGs do not)'}`)
  }
  if (f.trees.length > MAX_LISTED) lines.push(`  ... ${f.trees.length - MAX_LISTED} more trees differ`)
  for (const h of f.history) lines.push(`  round ${h.round}: ${counts(h.outcomes) || 'no exchange'}; owner's ACL holds ${h.ownerAclRecords} records`)
  if (f.failedExchanges.length) lines.push(`  last round, between members, not in sync: ${list(f.failedExchanges.map((e) => `${e.from}>${e.to} ${e.outcome}`))}`)
  for (const v of f.views) {
    lines.push(
      v.readers ? `  ${v.peer}'s ACL lets ${list(v.readers) || 'nobody'} read; the owner's lets ${list(f.ownerReaders)}` : `  ${v.peer} does not know the space yet (no ACL)`,
    )
  }
  if (f.parked.length) lines.push(`  parked: ${f.parked.map((x) => `${x.peer} ${x.changes} changes (${x.bytes} bytes)`).join(', ')}`)
  for (const r of f.refused) lines.push(`  ${r.peer} since its last start: refused ${counts(r.rejected) || 'nothing'}; dropped ${counts(r.dropped) || 'nothing'}`)
  if (f.down.length) lines.push(`  down: ${list(f.down)}`)
  if (f.nonMembers.length) lines.push(`  live, not members in the owner's view: ${list(f.nonMembers)}`)
  lines.push(f.eventsQueued ? '  events were still queued when the rounds stopped' : '  nothing was left in flight: every exchange had ended')
  return lines
}
