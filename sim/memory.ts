/**
 * What a hostile peer can make an honest one hold: parked changes, candidate derived roots and
 * per-peer session state. Read from each honest peer as the run goes and at its end, against
 * the bounds below.
 */
import { REPLICA_LIMITS } from '../sync/core/limits.ts'
import { PEER_LIMITS } from '../sync/protocol/limits.ts'
import type { SpaceReplica } from '../sync/replica/space-replica.ts'
import type { SyncSession } from '../sync/protocol/session.ts'

export interface MemoryFigures {
  parkedChanges: number
  parkedBytes: number
  /** Derived roots received and held until a writer builds on one or this replica expects it. */
  derivedCandidates: number
  derivedCandidateBytes: number
  /** Entries of the session's largest per-peer map. */
  peerStates: number
}

/**
 * The bounds honest peers are held to: the replica's and the protocol's own limits
 * (sync/core/limits.ts, sync/protocol/limits.ts). Per-peer session state: strangers' entries
 * are bounded by the protocol; authenticated peers' by the seed itself (the simulator never runs
 * more than SIM_MAX_AUTHENTICATED peers), so anything above their sum is state a minted peer id
 * bought.
 */
const SIM_MAX_AUTHENTICATED = 64
export const MEMORY_BOUNDS = {
  parkedBytes: REPLICA_LIMITS.maxParkedBytesPerSpace,
  derivedCandidateBytes: REPLICA_LIMITS.maxDerivedCandidateBytes,
  peerStates: Math.max(PEER_LIMITS.maxStrangerCounters, PEER_LIMITS.maxUnauthenticatedLinks) + SIM_MAX_AUTHENTICATED,
} as const

/** Reads the figures: the replica's through `memory()`, the session's through `peerState()`. */
export function memoryOf(replica: SpaceReplica, session: SyncSession): MemoryFigures {
  const m = replica.memory()
  const st = session.peerState()
  return {
    parkedChanges: m.parkedChanges,
    parkedBytes: m.parkedBytes,
    derivedCandidates: m.heldDerivedRoots,
    derivedCandidateBytes: m.heldDerivedBytes,
    peerStates: Math.max(st.counters, st.links),
  }
}

/** The bounds a figure breaks, each with a failure line. */
export function overBounds(peer: string, m: MemoryFigures): Array<{ figure: keyof typeof MEMORY_BOUNDS; line: string }> {
  const out: Array<{ figure: keyof typeof MEMORY_BOUNDS; line: string }> = []
  if (m.parkedBytes > MEMORY_BOUNDS.parkedBytes)
    out.push({ figure: 'parkedBytes', line: `${peer} parks ${m.parkedBytes} bytes (${m.parkedChanges} changes), bound ${MEMORY_BOUNDS.parkedBytes}` })
  if (m.derivedCandidateBytes > MEMORY_BOUNDS.derivedCandidateBytes)
    out.push({
      figure: 'derivedCandidateBytes',
      line: `${peer} holds ${m.derivedCandidates} candidate derived roots (${m.derivedCandidateBytes} bytes), bound ${MEMORY_BOUNDS.derivedCandidateBytes}`,
    })
  if (m.peerStates > MEMORY_BOUNDS.peerStates) out.push({ figure: 'peerStates', line: `${peer} keeps state for ${m.peerStates} peers, bound ${MEMORY_BOUNDS.peerStates}` })
  return out
}

/** The largest of each figure. */
export function maxFigures(a: MemoryFigures, b: MemoryFigures): MemoryFigures {
  return {
    parkedChanges: Math.max(a.parkedChanges, b.parkedChanges),
    parkedBytes: Math.max(a.parkedBytes, b.parkedBytes),
    derivedCandidates: Math.max(a.derivedCandidates, b.derivedCandidates),
    derivedCandidateBytes: Math.max(a.derivedCandidateBytes, b.derivedCandidateBytes),
    peerStates: Math.max(a.peerStates, b.peerStates),
  }
}

export const NO_FIGURES: MemoryFigures = { parkedChanges: 0, parkedBytes: 0, derivedCandidates: 0, derivedCandidateBytes: 0, peerStates: 0 }
