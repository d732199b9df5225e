import { drawHubPlan, type HubPlan } from './hub-plan.ts'
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
  /**
   * The daemon's scheduler runs on every peer with its own debounce, relay and backoff; only
   * its periodic round is shorter than the daemon's 30 s, so the safety phase sees several.
   */
  periodMs: number
  crashes: number
  partitions: number
  /** Honest admin concurrency (empty when the owner alone issues ACL records). */
  acl: AclPlan
  /** Hostile peers, on top of `peers` (see sim/adversary.ts). */
  adversaries: AdversarySpec[]
  /** Accounts that join through invites, and the guest key's revocation (sim/sharing-workload.ts). */
  sharing: SharingPlan
  /** Hubs and the topology around them (sim/hub-plan.ts); absent without `--hubs`. */
  hub?: HubPlan
}

/**
 * Sharing between accounts (docs/simulation.md, "Accounts"): some accounts the owner would have
 * added ask to join through an invite an admin mints, others that were never to be members ask
 * and are declined or withdraw; guests join through the owner's guest key, which the owner may
 * revoke later.
 */
export interface SharingPlan {
  joiners: JoinerSpec[]
  /** Fraction of the safety phase at which the owner revokes the guest key (none: never). */
  guestRevokeAt?: number
}

export interface JoinerSpec {
  account: number
  permission: 'reader' | 'writer' | 'guest'
  /** Fraction of the safety phase at which an admin mints the invite it uses. */
  at: number
  /** What becomes of the request: an admin accepts or declines it, or the joiner withdraws it. */
  outcome: 'accept' | 'decline' | 'cancel'
  /** Whether the minting revokes every prior live non-guest invite (`POST {S}/invites`). */
  replaces: boolean
}

/**
 * Concurrent admin actions: the owner grants admin to `admins` at setup, then `episodes` times
 * two distinct admins act while one of them is cut off from everyone, so their records are
 * really concurrent (docs/simulation.md, "Concurrent admins").
 */
export interface AclPlan {
  concurrent: boolean
  /** Honest accounts the owner makes admins at setup (in this order: the first is the most senior). */
  admins: number[]
  episodes: number
  /** Whether one episode has two admins remove each other. */
  mutualRemoval: boolean
}

export type AdversaryRole = 'stranger' | 'writer' | 'admin'

/** One hostile peer: a stranger never added, or a member the honest admins remove during the run. */
export interface AdversarySpec {
  /** Peer id `x<k>`, account 200 + k (keys never collide with honest accounts). */
  index: number
  account: number
  role: AdversaryRole
  /** Hostile actions over the safety phase. */
  actions: number
  /** Fraction of the safety phase at which an honest admin removes it (members only). */
  removeAt: number
  /** Whether another admin re-adds it after (or concurrently with) its removal. */
  readd: 'never' | 'concurrent' | 'later'
  /** Whether a re-added adversary is removed again later. */
  removeAgain: boolean
  /** Whether this stranger mints more peer ids than the per-peer state bound (an LRU's worth). */
  sybilStorm: boolean
}

/** Account numbers of adversaries start here (accountKey fills a byte with account + 1). */
export const ADVERSARY_ACCOUNT_BASE = 200

export interface DrawOptions {
  /** Peers per seed: drawn uniformly in [3, maxPeers], or exactly maxPeers with `exactPeers`. */
  maxPeers: number
  exactPeers?: boolean
  /** Scales the workload (writes); 1 is what CI and the 1000-seed target are sized for. */
  scale?: number
  /** Hostile peers per seed (default 0). */
  adversaries?: number
  /** Concurrent honest admins; defaults to on when there are adversaries. */
  concurrentAdmins?: boolean
  /** Hub peers per seed (default 0; sim/hub-plan.ts). */
  hubs?: number
}

/** Draws a run's configuration from its seed (stream 1 of the seed's PRNG family). */
export function drawConfig(seed: number, opts: DrawOptions): SimConfig {
  const cfg = drawBase(seed, opts)
  const sharing = drawSharing(seed, cfg)
  // A joiner is not also added directly.
  const joining = new Set(sharing.joiners.map((j) => j.account))
  // Drawn last, and only with hubs: a run without them keeps its draws and its trace.
  const hubs = Math.max(0, opts.hubs ?? 0)
  return {
    ...cfg,
    initialMembers: cfg.initialMembers.filter((m) => !joining.has(m.account)),
    lateMembers: cfg.lateMembers.filter((a) => !joining.has(a)),
    sharing,
    ...(hubs ? { hub: drawHubPlan(seed, hubs, cfg.peers, cfg.safetyMs) } : {}),
  }
}

/**
 * The joiners, from a stream of their own (stream 6), only when admins act concurrently (with
 * adversaries): a run without them draws and traces exactly what it did before sharing existed.
 * Of the accounts the owner was to add late, most join instead (four in five accepted as writers,
 * readers or guests, the others declined or withdrawn), and so do two in five of the plain members the owner was to add at setup (not account
 * 1, not the admins); of those never to be members, half ask anyway and are declined or withdraw.
 */
function drawSharing(seed: number, cfg: Omit<SimConfig, 'sharing'>): SharingPlan {
  if (!cfg.acl.concurrent) return { joiners: [] }
  const r = new Prng(seed, 6)
  const joiners: JoinerSpec[] = []
  const members = new Set([0, ...cfg.initialMembers.map((m) => m.account), ...cfg.lateMembers])
  const permission = () => r.pick(['writer', 'writer', 'reader', 'guest'] as const)
  for (const a of cfg.lateMembers) {
    if (!r.chance(0.75)) continue
    const outcome = r.chance(0.8) ? 'accept' : r.pick(['decline', 'cancel'] as const)
    joiners.push({ account: a, permission: outcome === 'accept' ? permission() : r.pick(['writer', 'reader'] as const), at: r.float() * 0.5, outcome, replaces: r.chance(0.3) })
  }
  const admins = new Set(cfg.acl.admins)
  for (const m of cfg.initialMembers) {
    if (m.account === 1 || admins.has(m.account) || !r.chance(0.4)) continue
    joiners.push({ account: m.account, permission: r.chance(0.25) ? 'guest' : m.role, at: r.float() * 0.4, outcome: 'accept', replaces: r.chance(0.3) })
  }
  for (const a of new Set(cfg.accounts)) {
    if (members.has(a) || !r.chance(0.5)) continue
    joiners.push({ account: a, permission: r.pick(['writer', 'reader'] as const), at: r.float() * 0.5, outcome: r.pick(['decline', 'cancel'] as const), replaces: r.chance(0.3) })
  }
  const guests = joiners.some((j) => j.permission === 'guest' && j.outcome === 'accept')
  return { joiners, ...(guests && r.chance(0.6) ? { guestRevokeAt: 0.55 + r.float() * 0.3 } : {}) }
}

function drawBase(seed: number, opts: DrawOptions): Omit<SimConfig, 'sharing'> {
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
    seed,
    peers,
    faults,
    delayMin,
    delayMax,
    skews,
    accounts,
    initialMembers,
    lateMembers,
    loss: on.has('loss') ? r.float() * 0.3 : 0,
    dup: on.has('dup') ? 0.01 + r.float() * 0.09 : 0,
    removals: peers >= 4 && r.chance(0.7) ? (peers >= 8 && r.chance(0.3) ? 2 : 1) : 0,
    objects: r.range(1, 3),
    writes: Math.round((r.range(12, 24) + peers) * scale),
    safetyMs: r.range(12_000, 24_000),
    periodMs: r.range(2_000, 10_000),
    crashes: on.has('crash') ? r.range(1, 3) : 0,
    partitions: r.range(1, 2),
    ...drawHostile(seed, opts, initialMembers),
  }
}

/**
 * The admin plan and the adversaries, from a stream of their own (stream 4): a run without
 * them draws exactly what it drew before they existed, so its trace does not change.
 */
function drawHostile(seed: number, opts: DrawOptions, initialMembers: SimConfig['initialMembers']): Pick<SimConfig, 'acl' | 'adversaries'> {
  const n = Math.max(0, opts.adversaries ?? 0)
  const concurrent = opts.concurrentAdmins ?? n > 0
  const off: AclPlan = { concurrent: false, admins: [], episodes: 0, mutualRemoval: false }
  if (!concurrent && n === 0) return { acl: off, adversaries: [] }
  const r = new Prng(seed, 4)
  let acl = off
  if (concurrent) {
    const writers = initialMembers.filter((m) => m.role === 'writer').map((m) => m.account)
    const admins = r.shuffle(writers).slice(0, Math.min(writers.length, r.range(1, 2)))
    acl = { concurrent: true, admins, episodes: r.range(1, 3), mutualRemoval: admins.length >= 2 && r.chance(0.25) }
  }
  const adversaries: AdversarySpec[] = []
  for (let k = 0; k < n; k++) {
    // The first is a member, the second a stranger; the rest are drawn.
    const role: AdversaryRole = k === 0 ? (r.chance(0.5) ? 'admin' : 'writer') : k === 1 ? 'stranger' : r.pick(['stranger', 'writer', 'admin'] as const)
    const readd = role === 'stranger' ? 'never' : r.pick(['never', 'never', 'concurrent', 'later'] as const)
    adversaries.push({
      index: k,
      account: ADVERSARY_ACCOUNT_BASE + k,
      role,
      actions: r.range(10, 18),
      removeAt: 0.2 + r.float() * 0.3,
      readd,
      removeAgain: readd !== 'never' && r.chance(0.5),
      sybilStorm: role === 'stranger' && r.chance(0.15),
    })
  }
  return { acl, adversaries }
}
