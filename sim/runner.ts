import { defaultCryptoProvider, type CryptoProvider } from '../sync/crypto/provider.ts'
import { identityOf } from '../sync/crypto/keys.ts'
import { SYNC_LIMITS } from '../sync/protocol/limits.ts'
import type { RoundResult } from '../sync/protocol/sync-driver.ts'
import { changesUnder, headsKey, holds, leaks, postRemovalKeys } from './checks.ts'
import { drawConfig, type DrawOptions, type FaultKind, type SimConfig } from './config.ts'
import { SimNetwork, type NetFaults } from './network.ts'
import { accountKey, SimPeer, type PeerContext } from './peer.ts'
import { Prng } from './prng.ts'
import { Scheduler } from './scheduler.ts'
import { randomWrite, type AckedWrite } from './workload.ts'

export interface RunOptions extends DrawOptions {
  /** Trace lines kept for a failure report (0: none). */
  tail?: number
  /** Liveness rounds allowed before a run counts as diverged. */
  maxLivenessRounds?: number
  /** Signature provider (default: the platform's, as the daemon uses). */
  crypto?: CryptoProvider
}

export interface SeedResult {
  seed: number
  peers: number
  faults: FaultKind[]
  /** 1 when the live members did not reach identical heads and state, or when equal heads ever
   *  came with unequal state. */
  diverged: number
  lostWrites: number
  leakedReads: number
  /** Full rounds the liveness phase needed (every live peer syncing with every other). */
  livenessRounds: number
  ackedWrites: number
  traceHash: string
  failures: string[]
  tail: string[]
  stats: {
    events: number
    virtualMs: number
    messages: number
    bytes: number
    lost: number
    duplicated: number
    cutDrops: number
    crashes: number
    rounds: number
    roundsOk: number
    roundsInSync: number
    removed: number
    members: number
    dropped: Record<string, number>
    rejected: Record<string, number>
    outcomes: Record<string, number>
  }
}

const DEFAULT_LIVENESS_ROUNDS = 8
const LIVENESS_STAGGER_MS = 40

/**
 * Runs one seed: setup, a safety phase with faults (invariants checked as it goes), then a
 * liveness phase on a healed network, and the final checks. See docs/simulation.md.
 */
export async function runSeed(seed: number, opts: RunOptions): Promise<SeedResult> {
  const cfg = drawConfig(seed, opts)
  const sched = new Scheduler(opts.tail ?? 0)
  const rng = new Prng(seed, 2)
  const crypto = opts.crypto ?? (await defaultCryptoProvider())
  const failures: string[] = []
  const fail = (s: string) => {
    failures.push(s)
    sched.record(`FAIL ${s}`)
  }
  sched.record(`config ${JSON.stringify(cfg)}`)

  const faults: NetFaults = { loss: cfg.loss, dup: cfg.dup, delayMin: cfg.delayMin, delayMax: cfg.delayMax, ordered: !cfg.faults.includes('reorder') }
  const net = new SimNetwork(sched, new Prng(seed, 3), faults, SYNC_LIMITS.maxMessageBytes)
  let phase: 'setup' | 'safety' | 'liveness' = 'setup'
  const rounds = { total: 0, ok: 0, inSync: 0, outcomes: {} as Record<string, number> }
  const track = (done: Promise<RoundResult>) => {
    rounds.total++
    const ph = phase
    void done.then((r) => {
      if (r.ok) rounds.ok++
      if (r.outcome === 'in_sync') rounds.inSync++
      const k = `${ph}:${r.outcome}${r.error ? ':' + r.error : ''}`
      rounds.outcomes[k] = (rounds.outcomes[k] ?? 0) + 1
    })
  }

  const ctx: PeerContext = {
    sched, net, crypto, spaceId: '', roundTimeoutMs: 8000,
    onCrash: (p) => {
      p.stop()
      sched.record(`crashed ${p.id}`)
      if (phase === 'safety') {
        sched.after(rng.range(500, 6000), `restart ${p.id}`, async () => {
          if (!p.alive && phase === 'safety') await p.start()
        })
      }
    },
  }
  const peers = cfg.accounts.map((a, i) => new SimPeer(`p${i}`, i, a, cfg.skews[i], new Prng(seed, 100 + i), () => ctx))
  const owner = peers[0]
  const idCache = new Map<number, string>()
  const identity = (account: number) => {
    let id = idCache.get(account)
    if (!id) idCache.set(account, (id = identityOf(accountKey(account).publicKey)))
    return id
  }
  const acked: AckedWrite[] = []
  const removed = new Map<number, string>()
  let diverged = 0
  let leakedReads = 0

  const spaceId = await owner.createSpace(crypto)
  ctx.spaceId = spaceId

  // ---------------------------------------------------------------- setup (no faults yet)
  for (const m of cfg.initialMembers) {
    const id = await owner.replica.addMember(identity(m.account), m.role)
    acked.push({ id, tree: spaceId, peer: owner.id, account: 0, kind: 'add', at: 0 })
  }
  for (let i = 0; i < cfg.objects; i++) {
    const o = await owner.replica.createObject()
    acked.push({ id: o, tree: o, peer: owner.id, account: 0, kind: 'create', at: 0 })
  }
  for (const p of peers) await p.start()

  // ---------------------------------------------------------------- safety phase schedule
  phase = 'safety'
  const T = cfg.safetyMs
  const live = () => peers.filter((p) => p.alive)

  const tick = (p: SimPeer, at: number) =>
    sched.at(at, `tick ${p.id}`, async () => {
      if (phase !== 'safety') return
      if (p.alive) {
        const targets = rng.shuffle(p.transport.peers()).slice(0, rng.range(1, 2))
        for (const q of targets) track((await p.driver.begin(q, spaceId)).done)
      }
      tick(p, sched.now + Math.floor(cfg.syncEveryMs / 2) + rng.int(cfg.syncEveryMs))
    })
  for (const p of peers) tick(p, 10 + rng.int(cfg.syncEveryMs))

  for (let i = 0; i < cfg.writes; i++) {
    sched.at(rng.int(T), 'write', async () => {
      if (phase !== 'safety') return
      const candidates = live()
      if (!candidates.length) return
      const p = rng.pick(candidates)
      sched.record(`write ${p.id} ${await randomWrite(p, rng, acked, sched.now)}`)
    })
  }

  const ownerAcl = (label: string, at: number, fn: () => Promise<string | undefined>) => {
    const attempt = (t: number) =>
      sched.at(t, label, async () => {
        if (phase !== 'safety') return
        if (!owner.alive) return void attempt(sched.now + 1000)
        try {
          sched.record(`${label}: ${(await fn()) ?? 'nothing to do'}`)
        } catch (err) {
          sched.record(`${label}: failed ${(err as Error).name}`)
        }
      })
    attempt(at)
  }
  for (const a of cfg.lateMembers) {
    ownerAcl(`add ${a}`, rng.int(Math.floor(T * 0.7)), async () => {
      const id = await owner.replica.addMember(identity(a), 'writer')
      acked.push({ id, tree: spaceId, peer: owner.id, account: 0, kind: 'add', at: sched.now })
      return id
    })
  }
  for (let i = 0; i < cfg.removals; i++) {
    ownerAcl('remove', Math.floor(T * (0.3 + rng.float() * 0.5)), async () => {
      const st = owner.replica.acl.current()
      const candidates = [...new Set(cfg.accounts)].filter((a) => a !== 0 && !removed.has(a) && st.canRead(identity(a)))
      if (!candidates.length) return undefined
      const a = rng.pick(candidates)
      const id = await owner.replica.removeMember(identity(a))
      removed.set(a, id)
      acked.push({ id, tree: spaceId, peer: owner.id, account: 0, kind: 'remove', at: sched.now })
      return `${a} ${id}`
    })
  }

  // Faults.
  const ids = peers.map((p) => p.id)
  const allLinks: Array<[string, string]> = []
  for (let i = 0; i < ids.length; i++) for (let j = i + 1; j < ids.length; j++) allLinks.push([ids[i], ids[j]])
  const partition = (label: string, at: number, dur: number, links: Array<[string, string]>) => {
    sched.at(at, `${label} cut ${links.length}`, () => {
      if (phase !== 'safety') return
      links.forEach(([a, b]) => net.cut(a, b))
      sched.after(dur, `${label} heal`, () => links.forEach(([a, b]) => net.restore(a, b)))
    })
  }
  for (let k = 0; k < cfg.partitions; k++) {
    const at = rng.int(Math.floor(T * 0.8))
    const dur = rng.range(2000, 8000)
    if (cfg.faults.includes('isolate')) {
      const x = rng.pick(ids)
      partition(`isolate ${x}`, at, dur, allLinks.filter(([a, b]) => a === x || b === x))
    }
    if (cfg.faults.includes('split')) {
      const order = rng.shuffle(ids)
      const side = new Set(order.slice(0, rng.range(1, ids.length - 1)))
      partition('split', rng.int(Math.floor(T * 0.8)), dur, allLinks.filter(([a, b]) => side.has(a) !== side.has(b)))
    }
    if (cfg.faults.includes('swizzle')) {
      // FoundationDB's swizzle-clog: cut a random subset of links one by one, then restore
      // them one by one in another random order.
      const start = rng.int(Math.floor(T * 0.7))
      const subset = rng.shuffle(allLinks).slice(0, rng.range(1, allLinks.length))
      const gap = Math.max(5, Math.min(rng.range(50, 600), Math.floor((T - start) / (2 * subset.length + 1))))
      const cut = new Set<string>()
      subset.forEach(([a, b], i) =>
        sched.at(start + i * gap, `swizzle cut ${a}|${b}`, () => {
          if (phase !== 'safety') return
          net.cut(a, b)
          cut.add(`${a}|${b}`)
        }),
      )
      const healAt = start + subset.length * gap + rng.range(500, 4000)
      rng.shuffle(subset).forEach(([a, b], i) =>
        sched.at(healAt + i * gap, `swizzle heal ${a}|${b}`, () => {
          if (cut.delete(`${a}|${b}`)) net.restore(a, b)
        }),
      )
    }
  }
  for (let k = 0; k < cfg.crashes; k++) {
    sched.at(rng.int(Math.floor(T * 0.9)), 'crash', () => {
      if (phase !== 'safety') return
      const candidates = live()
      if (!candidates.length) return
      const p = rng.pick(candidates)
      if (rng.chance(0.5)) {
        sched.record(`crash ${p.id} now`)
        p.storage.crashNow()
      } else {
        const n = rng.range(1, 3)
        sched.record(`crash ${p.id} at commit +${n}`)
        p.storage.armCrash(n)
      }
    })
  }

  // Invariants as the run goes.
  const checkpoint = async (label: string) => {
    const alive = live()
    // Equal heads must mean byte-identical materialized state.
    const groups = new Map<string, SimPeer[]>()
    for (const p of alive) {
      const k = headsKey(p.replica)
      groups.set(k, [...(groups.get(k) ?? []), p])
    }
    for (const g of groups.values()) {
      if (g.length < 2) continue
      const d0 = await g[0].replica.stateDigest()
      for (const p of g.slice(1)) {
        if ((await p.replica.stateDigest()) !== d0) {
          diverged = 1
          fail(`${label}: ${g[0].id} and ${p.id} hold the same heads but different state`)
        }
      }
    }
    leakedReads += await checkLeaks(label, false)
  }
  const checkLeaks = async (label: string, final: boolean): Promise<number> => {
    let n = 0
    if (!removed.size) return 0
    const knowers = live().filter((p) => [...removed.values()].every((id) => p.replica.acl.has(id)))
    if (!knowers.length) return 0
    const full = knowers.reduce((a, b) => (b.replica.acl.entries.size > a.replica.acl.entries.size ? b : a))
    for (const a of removed.keys()) {
      const keys = postRemovalKeys(full.replica.acl, identity(a))
      const post = final ? await changesUnder(full.replica, keys) : undefined
      for (const p of live().filter((x) => x.account === a)) {
        for (const l of await leaks(p.replica, p.key, full.replica.acl, keys, post)) {
          n++
          fail(`${label}: removed ${p.id} (account ${a}): ${l}`)
        }
      }
    }
    return n
  }
  for (let t = 5000; t < T; t += 5000) sched.at(t, 'checkpoint', () => checkpoint(`checkpoint@${t}`))

  await sched.run(T)

  // ---------------------------------------------------------------- liveness phase
  phase = 'liveness'
  net.restoreAll()
  net.faults = { ...faults, loss: 0, dup: 0 }
  sched.record('liveness: network healed')
  for (const p of peers) {
    if (p.alive) p.storage.armCrash(0)
    else await p.start()
  }
  await sched.run(sched.now + 1000)

  const maxRounds = opts.maxLivenessRounds ?? DEFAULT_LIVENESS_ROUNDS
  const memberPeers = () => {
    const st = owner.replica.acl.current()
    return peers.filter((p) => p.alive && st.canRead(p.identity))
  }
  const converged = () => {
    const ms = memberPeers()
    const k = headsKey(ms[0].replica)
    return ms.every((p) => headsKey(p.replica) === k)
  }
  let livenessRounds = 0
  // At least one full round when a member was removed, even if members already agree: a removed
  // member's writes from before its removal reach the space only when it syncs and is refused.
  let done = converged()
  while ((!done || (livenessRounds < 1 && removed.size > 0)) && livenessRounds < maxRounds) {
    livenessRounds++
    const ps = live()
    // Each peer opens its exchanges in turn, a few ms apart, so data a round brings in early
    // is already there for the exchanges that follow (instead of every peer sending it at once).
    ps.forEach((p, i) =>
      sched.after(i * LIVENESS_STAGGER_MS, `round ${livenessRounds} ${p.id}`, async () => {
        if (!p.alive) return
        for (const q of ps) if (p !== q && q.alive) track((await p.driver.begin(q.id, spaceId)).done)
      }),
    )
    await sched.run()
    done = converged()
    sched.record(`liveness round ${livenessRounds}: ${done ? 'converged' : 'not yet'}`)
  }

  // ---------------------------------------------------------------- final checks
  const members = memberPeers()
  const rep = members[0]
  if (!done) {
    diverged = 1
    const k = headsKey(rep.replica)
    fail(`not converged after ${livenessRounds} liveness rounds: ${members.filter((p) => headsKey(p.replica) !== k).map((p) => p.id).join(',')} differ from ${rep.id}`)
  } else {
    const d0 = await rep.replica.stateDigest()
    for (const p of members.slice(1)) {
      if ((await p.replica.stateDigest()) !== d0) {
        diverged = 1
        fail(`final: ${p.id} holds the same heads as ${rep.id} but a different state`)
      }
    }
  }
  // Never-members get nothing at all.
  for (const p of peers.filter((x) => x.alive && !removed.has(x.account) && !owner.replica.acl.current().canRead(x.identity))) {
    if (p.replica.known || p.replica.treeIds().length) {
      leakedReads++
      fail(`non-member ${p.id} holds data of the space`)
    }
  }
  leakedReads += await checkLeaks('final', true)

  // No acknowledged write lost: every converged member holds every one in its DAG (applied, or
  // voided by the removal rule), or the write would be refused there (a write by a removed
  // member that the removal rules reject).
  let lostWrites = 0
  for (const w of acked) {
    let everywhere = true
    for (const p of members) if (!(await holds(p.replica, w.tree, w.id))) everywhere = false
    if (everywhere) continue
    const writer = peers.find((p) => p.id === w.peer)!
    const raw = (await writer.replica.rawChanges(w.tree, [w.id]))[0]?.raw
    if (!raw) {
      lostWrites++
      fail(`acked ${w.kind} ${w.id} by ${w.peer} is gone from its own storage`)
      continue
    }
    const report = await rep.replica.ingest([{ id: w.id, raw }])
    const rejected = report.rejected.find((x) => x.id === w.id)
    if (rejected && removed.has(w.account) && (rejected.reason === 'not_member' || rejected.reason === 'stale_acl_head')) continue
    lostWrites++
    fail(`acked ${w.kind} ${w.id} by ${w.peer} never reached ${rep.id} (${rejected ? `rejected ${rejected.reason}` : report.accepted.length ? 'accepted when offered' : `missing ${report.missing.length} deps`})`)
  }

  const dropped: Record<string, number> = {}
  const rejected: Record<string, number> = {}
  for (const p of peers) {
    for (const c of p.session.allCounters().values()) {
      for (const [k, v] of Object.entries(c.dropped)) dropped[k] = (dropped[k] ?? 0) + v
      for (const [k, v] of Object.entries(c.rejected)) rejected[k] = (rejected[k] ?? 0) + v
    }
  }
  for (const p of peers) sched.record(`final ${p.id} ${p.alive ? await p.replica.stateDigest() : 'down'}`)
  sched.record(`result diverged=${diverged} lost=${lostWrites} leaked=${leakedReads}`)
  return {
    seed, peers: cfg.peers, faults: cfg.faults, diverged, lostWrites, leakedReads, livenessRounds,
    ackedWrites: acked.length, traceHash: sched.traceHash(), failures, tail: [...sched.tail],
    stats: {
      events: sched.executed, virtualMs: sched.now, messages: net.stats.sent, bytes: net.stats.bytes, lost: net.stats.lost,
      duplicated: net.stats.duplicated, cutDrops: net.stats.cut, crashes: peers.reduce((n, p) => n + p.crashes, 0),
      rounds: rounds.total, roundsOk: rounds.ok, roundsInSync: rounds.inSync, removed: removed.size, members: members.length,
      dropped, rejected, outcomes: rounds.outcomes,
    },
  }
}

export type { SimConfig }
