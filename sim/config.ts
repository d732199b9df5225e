import { Prng } from './prng.ts'

export const FAULT_KINDS = ['delay', 'loss', 'dup', 'reorder', 'isolate', 'split', 'swizzle', 'crash', 'skew'] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

/** Everything about one simulated run that the seed decides before it starts. */
export interface SimConfig {
  seed: number
  peers: number
  faults: FaultKind[]
  loss: number
  dup: number
  delayMin: number
  delayMax: number
  /** Per peer, ms added to the virtual clock in its Env. */
  skews: number[]
  /** Account index of each peer (peer i normally uses account i; a twin device shares one). */
  accounts: number[]
  /** Accounts the owner adds before the run (role per account). */
  initialMembers: Array<{ account: number; role: 'writer' | 'reader' }>
  /** Accounts added during the run. */
  lateMembers: number[]
  /** Members removed during the run (with key rotation). */
  removals: number
  objects: number
  writes: number
  safetyMs: number
  syncEveryMs: number
  crashes: number
  partitions: number
}

export interface DrawOptions {
  /** Peers per seed: drawn uniformly in [3, maxPeers], or exactly maxPeers with `exactPeers`. */
  maxPeers: number
  exactPeers?: boolean
  /** Scales the workload (writes); 1 is what CI and the 1000-seed target are sized for. */
  scale?: number
}

/** Draws a run's configuration from its seed (stream 1 of the seed's PRNG family). */
export function drawConfig(seed: number, opts: DrawOptions): SimConfig {
  const r = new Prng(seed, 1)
  const maxPeers = Math.max(3, opts.maxPeers)
  const peers = opts.exactPeers ? maxPeers : r.range(3, maxPeers)
  const on = new Set<FaultKind>(['delay'])
  for (const k of FAULT_KINDS) if (k !== 'delay' && r.chance(0.5)) on.add(k)
  const faults = FAULT_KINDS.filter((k) => on.has(k))
  const delayMin = r.range(1, 20)
  const delayMax = delayMin + (on.has('reorder') ? r.range(30, 250) : r.range(0, 3))
  const skews = Array.from({ length: peers }, () => (on.has('skew') ? r.range(-60_000, 60_000) : 0))
  // Peer i is account i (account 0 is the owner, on peer 0); sometimes the last peer is a
  // second device of account 1.
  const accounts = Array.from({ length: peers }, (_, i) => i)
  if (peers >= 4 && r.chance(0.5)) accounts[peers - 1] = 1
  const distinct = [...new Set(accounts)].filter((a) => a !== 0)
  const initialMembers: SimConfig['initialMembers'] = []
  const lateMembers: number[] = []
  for (const a of distinct) {
    if (a === 1 || r.chance(0.7)) initialMembers.push({ account: a, role: a !== 1 && r.chance(0.12) ? 'reader' : 'writer' })
    else if (r.chance(0.8)) lateMembers.push(a)
  }
  const scale = opts.scale ?? 1
  return {
    seed, peers, faults, delayMin, delayMax, skews, accounts, initialMembers, lateMembers,
    loss: on.has('loss') ? r.float() * 0.3 : 0,
    dup: on.has('dup') ? 0.01 + r.float() * 0.09 : 0,
    removals: peers >= 4 && r.chance(0.7) ? (peers >= 8 && r.chance(0.3) ? 2 : 1) : 0,
    objects: r.range(1, 3),
    writes: Math.round((r.range(12, 24) + peers) * scale),
    safetyMs: r.range(12_000, 24_000),
    syncEveryMs: r.range(800, 2500),
    crashes: on.has('crash') ? r.range(1, 3) : 0,
    partitions: r.range(1, 2),
  }
}
