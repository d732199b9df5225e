/**
 * What a hostile peer can make an honest one hold: parked changes, candidate derived roots and
 * per-peer session state. Read from each honest peer as the run goes and at its end, against
 * the bounds below.
 */
import type { SpaceReplica } from '../sync/replica/space-replica.ts'
import type { SyncSession } from '../sync/protocol/session.ts'

export interface MemoryFigures {
  parkedChanges: number
  parkedBytes: number
  derivedCandidates: number
  /** Entries of the session's largest per-peer map. */
  peerStates: number
}

/**
 * The bounds the simulator holds honest peers to. The engine configures no such bounds yet
 * (issue 11): until the replica and protocol limits exist these are the simulator's own, sized
 * well above anything honest traffic in a seed needs.
 */
export const MEMORY_BOUNDS = {
  parkedBytes: 4 * 1024 * 1024,
  derivedCandidates: 1024,
  peerStates: 1024,
} as const

type ChangeMap = Map<string, { raw: Uint8Array }>

interface Internals {
  s?: { parked?: { byId?: ChangeMap } }
  parked?: ChangeMap
}

interface SessionInternals {
  links?: Map<string, unknown>
}

/**
 * Reads the figures. The replica and session expose none of them yet, so this reads their
 * private maps (read only) until accessors exist.
 */
export function memoryOf(replica: SpaceReplica, session: SyncSession): MemoryFigures {
  const r = replica as unknown as Internals
  const parked = r.s?.parked?.byId ?? r.parked
  let parkedBytes = 0
  for (const c of parked?.values() ?? []) parkedBytes += c.raw.length
  const s = session as unknown as SessionInternals
  const peerStates = Math.max(session.allCounters().size, s.links?.size ?? 0)
  return { parkedChanges: parked?.size ?? 0, parkedBytes, derivedCandidates: 0, peerStates }
}

/** The bounds a figure breaks, each with a failure line. */
export function overBounds(peer: string, m: MemoryFigures): Array<{ figure: keyof typeof MEMORY_BOUNDS; line: string }> {
  const out: Array<{ figure: keyof typeof MEMORY_BOUNDS; line: string }> = []
  if (m.parkedBytes > MEMORY_BOUNDS.parkedBytes) out.push({ figure: 'parkedBytes', line: `${peer} parks ${m.parkedBytes} bytes (${m.parkedChanges} changes), bound ${MEMORY_BOUNDS.parkedBytes}` })
  if (m.derivedCandidates > MEMORY_BOUNDS.derivedCandidates) out.push({ figure: 'derivedCandidates', line: `${peer} holds ${m.derivedCandidates} candidate derived roots, bound ${MEMORY_BOUNDS.derivedCandidates}` })
  if (m.peerStates > MEMORY_BOUNDS.peerStates) out.push({ figure: 'peerStates', line: `${peer} keeps state for ${m.peerStates} peers, bound ${MEMORY_BOUNDS.peerStates}` })
  return out
}

/** The largest of each figure. */
export function maxFigures(a: MemoryFigures, b: MemoryFigures): MemoryFigures {
  return {
    parkedChanges: Math.max(a.parkedChanges, b.parkedChanges), parkedBytes: Math.max(a.parkedBytes, b.parkedBytes),
    derivedCandidates: Math.max(a.derivedCandidates, b.derivedCandidates), peerStates: Math.max(a.peerStates, b.peerStates),
  }
}

export const NO_FIGURES: MemoryFigures = { parkedChanges: 0, parkedBytes: 0, derivedCandidates: 0, peerStates: 0 }
