import { defaultCryptoProvider, type CryptoProvider } from '../sync/crypto/provider.ts'
import { decodeChange } from '../sync/dag/change.ts'
import { Keyring } from '../sync/acl/keyring.ts'
import { identityOf } from '../sync/crypto/keys.ts'
import { SYNC_LIMITS } from '../sync/protocol/limits.ts'
import type { RoundResult } from '../sync/protocol/sync-driver.ts'
import { AclWorkload } from './acl-workload.ts'
import { Adversary, type AttackKind } from './adversary.ts'
import { changesUnder, headsKey, holds, leaks, postRemovalKeys, removedInView, sealLeaks, voidByRemoval } from './checks.ts'
import { drawConfig, type DrawOptions, type FaultKind, type SimConfig } from './config.ts'
import { maxFigures, memoryOf, NO_FIGURES, overBounds, MEMORY_BOUNDS, type MemoryFigures } from './memory.ts'
import { SimNetwork, type NetFaults } from './network.ts'
import { judge, voidOrForgedHeld } from './oracle.ts'
import { accountKey, SimPeer, type PeerContext } from './peer.ts'
import { Prng } from './prng.ts'
import { Scheduler } from './scheduler.ts'
import { Timeline } from './timeline.ts'
import { randomWrite, type AckedWrite } from './workload.ts'
import { textsDiffer } from './ytext-workload.ts'
import { SharingWorkload } from './sharing-workload.ts'

export interface RunOptions extends DrawOptions {
  /** Trace lines kept for a failure report (0: none). */
  tail?: number
  /** Liveness rounds allowed before a run counts as diverged. */
  maxLivenessRounds?: number
  /** Signature provider (default: the platform's, as the daemon uses). */
  crypto?: CryptoProvider
  /** Called once the final checks ran, with every peer (for debugging a seed from code). */
  inspect?: (honest: readonly SimPeer[], hostile: readonly Adversary[]) => void | Promise<void>
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
  /** Forged, tampered or junk changes held, and void changes or ACL records that took effect. */
  voidApplied: number
  /** Times an honest peer's parked bytes, derived-root candidates or per-peer state went over its bound. */
  memoryOver: number
  /** Largest figures seen on any honest peer. */
  memory: MemoryFigures
  /** Hostile actions by kind. */
  attacks: Partial<Record<AttackKind, number>>
  adversaries: number
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
    /** Crafted changes the oracle judged void (made after their author's removal), and forged or junk ones. */
    judgedVoid: number
    judgedRejected: number
    /** Invites minted, joins asked, accepted, declined and withdrawn, guest keys revoked (sim/sharing-workload.ts). */
    sharing?: SharingWorkload['stats']
  }
}

const DEFAULT_LIVENESS_ROUNDS = 8
const MAX_FAILURE_LINES = 60
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
    // Every failure counts; a seed's report keeps the first ones.
    if (failures.length < MAX_FAILURE_LINES) failures.push(s)
    else if (failures.length === MAX_FAILURE_LINES) failures.push('(more failures omitted)')
    sched.record(`FAIL ${s}`)
  }
  // Without hostile peers or concurrent admins the trace is what it was before they existed.
  const { acl: _acl, adversaries: _adv, sharing: _sharing, ...plain } = cfg
  sched.record(`config ${JSON.stringify(cfg.adversaries.length || cfg.acl.concurrent ? cfg : plain)}`)

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

  let sharing: SharingWorkload | undefined
  const ctx: PeerContext = {
    sched, net, crypto, spaceId: '', roundTimeoutMs: 8000,
    // Rounds run when the daemon's scheduler decides, from setup to the end of the safety phase.
    scheduling: () => (phase === 'liveness' ? undefined : { periodMs: cfg.periodMs }),
    onRound: (_p, r) => track(Promise.resolve(r)),
    onJoinStatus: (p, e) => sharing?.onJoinStatus(p, e),
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
  let voidApplied = 0
  let memoryOver = 0
  let memory: MemoryFigures = { ...NO_FIGURES }

  const spaceId = await owner.createSpace(crypto)
  ctx.spaceId = spaceId

  // ---------------------------------------------------------------- setup (no faults yet)
  const timeline = new Timeline()
  for (const m of cfg.initialMembers) {
    const id = await owner.replica.addMember(identity(m.account), m.role)
    acked.push({ id, tree: spaceId, peer: owner.id, account: 0, kind: 'add', at: 0 })
    timeline.record({ identity: identity(m.account), kind: 'add', role: m.role, id, author: owner.identity })
  }
  const hostileRng = new Prng(seed, 5)
  const aclWork = new AclWorkload({
    sched, net, r: hostileRng, cfg, peers, owner, spaceId, acked, removed, timeline, identity,
    inSafety: () => phase === 'safety', allIds: () => [...peers, ...hostile.map((h) => h.peer)].map((p) => p.id),
  })
  if (cfg.acl.concurrent) await aclWork.grantAdmins()
  sharing = cfg.sharing.joiners.length
    ? new SharingWorkload({ sched, r: new Prng(seed, 7), cfg, crypto, peers, owner, spaceId, acked, removed, timeline, identity, inSafety: () => phase === 'safety' })
    : undefined
  // Member adversaries are added by the owner (only the owner grants admin).
  for (const s of cfg.adversaries) {
    if (s.role === 'stranger') continue
    const id = await owner.replica.addMember(identity(s.account), s.role)
    acked.push({ id, tree: spaceId, peer: owner.id, account: 0, kind: 'add', at: 0 })
    timeline.record({ identity: identity(s.account), kind: 'add', role: s.role, id, author: owner.identity })
  }
  for (let i = 0; i < cfg.objects; i++) {
    const o = await owner.replica.createObject()
    acked.push({ id: o, tree: o, peer: owner.id, account: 0, kind: 'create', at: 0 })
  }
  for (const p of peers) await p.start()
  const hostile = cfg.adversaries.map((s) => new Adversary(s, new SimPeer(`x${s.index}`, cfg.peers + s.index, s.account, 0, new Prng(seed, 300 + s.index), () => ctx), new Prng(seed, 400 + s.index), {
    sched, net, crypto, spaceId, timeline, owner: owner.identity, honest: () => peers,
    accomplices: () => cfg.adversaries.map((a) => identity(a.account)), inSafety: () => phase === 'safety',
    sybilStormSize: MEMORY_BOUNDS.peerStates + 64,
  }))
  for (const h of hostile) await h.start()
  /** Honest removal records by the identity they remove (sim/checks.ts, removedInView). */
  const removalsByIdentity = () => {
    const m = new Map<string, string[]>()
    for (const e of timeline.events) if (e.kind === 'remove') m.set(e.identity, [...(m.get(e.identity) ?? []), e.id])
    return m
  }

  // ---------------------------------------------------------------- safety phase schedule
  phase = 'safety'
  const T = cfg.safetyMs
  const live = () => peers.filter((p) => p.alive)

  for (let i = 0; i < cfg.writes; i++) {
    sched.at(rng.int(T), 'write', async () => {
      if (phase !== 'safety') return
      const candidates = live()
      if (!candidates.length) return
      const p = rng.pick(candidates)
      const before = acked.length
      sched.record(`write ${p.id} ${await randomWrite(p, rng, acked, sched.now)}`)
      if (acked.length > before) {
        const seq = timeline.next()
        for (const w of acked.slice(before)) w.seq = seq
      }
      if (acked.length > before && timeline.events.some((e) => e.kind === 'remove')) {
        const seen = removedInView(p.replica, removalsByIdentity())
        if (seen.length) for (const w of acked.slice(before)) w.removedInView = seen
      }
      // Rule 3: a writer never cites a head its own fold skipped (it may cite one that a
      // record it has not seen yet will void: nobody can tell then).
      if (hostile.length || cfg.acl.concurrent) {
        for (const w of acked.slice(before)) {
          const raw = (await p.replica.rawChanges(w.tree, [w.id]))[0]?.raw
          const head = raw ? decodeChange(raw).aclHeadId : ''
          if (head && p.replica.acl.current().isVoid(head)) {
            voidApplied++
            fail(`${p.id} wrote ${w.id} citing ACL record ${head}, void in its own fold (rule 3)`)
          }
        }
      }
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
  for (const h of hostile) {
    h.schedule(T)
    if (h.spec.role !== 'stranger') aclWork.scheduleAdversary(h.spec, h.identity)
  }
  sharing?.schedule()
  if (cfg.acl.concurrent) aclWork.scheduleHonest()
  else ownerOnly()
  function ownerOnly() {
  for (const a of cfg.lateMembers) {
    ownerAcl(`add ${a}`, rng.int(Math.floor(T * 0.7)), async () => {
      const id = await owner.replica.addMember(identity(a), 'writer')
      acked.push({ id, tree: spaceId, peer: owner.id, account: 0, kind: 'add', at: sched.now })
      timeline.record({ identity: identity(a), kind: 'add', role: 'writer', id, author: owner.identity })
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
      timeline.record({ identity: identity(a), kind: 'remove', role: 'none', id, author: owner.identity })
      return `${a} ${id}`
    })
  }
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
    checkMemory(label)
  }
  // Each (peer, figure) over its bound counts once, when first seen.
  const overSeen = new Set<string>()
  const checkMemory = (label: string) => {
    for (const p of live()) {
      const m = memoryOf(p.replica, p.session)
      memory = maxFigures(memory, m)
      for (const o of overBounds(p.id, m)) {
        if (overSeen.has(`${p.id} ${o.figure}`)) continue
        overSeen.add(`${p.id} ${o.figure}`)
        memoryOver++
        fail(`${label}: memory: ${o.line}`)
      }
    }
  }
  /** Accounts some honest record removed (honest ones, and member adversaries), with those records. */
  const removedAccounts = () => {
    const m = new Map<number, string[]>()
    for (const [a, id] of removed) m.set(a, [id])
    for (const h of hostile) {
      const ids = timeline.events.filter((e) => e.kind === 'remove' && e.identity === h.identity).map((e) => e.id)
      if (ids.length) m.set(h.spec.account, ids)
    }
    return m
  }
  const checkLeaks = async (label: string, final: boolean): Promise<number> => {
    let n = 0
    const gone = removedAccounts()
    if (!gone.size) return 0
    const knowers = live().filter((p) => [...gone.values()].every((ids) => ids.every((id) => p.replica.acl.has(id))))
    if (!knowers.length) return 0
    const full = knowers.reduce((a, b) => (b.replica.acl.entries.size > a.replica.acl.entries.size ? b : a))
    for (const a of gone.keys()) {
      // Re-added (or its removal lost to a more senior admin): it may read again.
      if (full.replica.acl.current().canRead(identity(a))) continue
      const keys = postRemovalKeys(full.replica.acl, identity(a), live().map((p) => p.replica.acl))
      const post = final ? await changesUnder(full.replica, keys) : undefined
      // What hostile peers of other accounts hold, they may have handed it (sim/checks.ts, leaks).
      const hostileHeld = new Set<string>()
      for (const h of hostile) if (h.spec.account !== a) for (const c of await h.peer.replica.allChanges()) hostileHeld.add(c.id)
      for (const p of [...live(), ...hostile.map((h) => h.peer)].filter((x) => x.account === a)) {
        for (const l of await leaks(p.replica, p.key, full.replica.acl, keys, post, hostileHeld)) {
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
  // From here on the runner's own full rounds are the check; the schedulers stop.
  // Joins stop asking too (their retries would keep virtual time running forever): a joiner
  // accepted by then syncs in the full rounds; one still pending stays a non-member.
  for (const p of [...peers, ...hostile.map((h) => h.peer)]) {
    p.stopScheduling()
    p.stopJoin()
  }
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
  // Member adversaries count: until the honest removal of one reaches the owner, the owner may
  // hold a void record of its that removes an honest admin, who then looks like no member.
  // Two, in fact: the removal notice (docs/protocol.md 5c) may overtake the refusal it follows on
  // a link that reorders, the refused member then takes it for the exchange's answer and pushes
  // only at its next refusal, which the daemon's next round brings.
  const anyRemoved = removed.size > 0 || removedAccounts().size > 0
  let done = converged()
  while ((!done || (livenessRounds < 2 && anyRemoved)) && livenessRounds < maxRounds) {
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
    const differ = members.filter((p) => headsKey(p.replica) !== k)
    fail(`not converged after ${livenessRounds} liveness rounds: ${differ.map((p) => p.id).join(',')} differ from ${rep.id}`)
    for (const p of differ.slice(0, 3)) {
      for (const t of [spaceId, ...new Set([...rep.replica.treeIds(), ...p.replica.treeIds()])]) {
        const [a, b] = [rep.replica.heads(t).join(','), p.replica.heads(t).join(',')]
        if (a !== b) fail(`  ${t === spaceId ? 'ACL' : `tree ${t.slice(0, 8)}`}: ${rep.id} has ${rep.replica.heads(t).length} heads [${a.slice(0, 60)}], ${p.id} [${b.slice(0, 60)}]`)
      }
    }
  } else {
    const d0 = await rep.replica.stateDigest()
    for (const p of members.slice(1)) {
      if ((await p.replica.stateDigest()) !== d0) {
        diverged = 1
        fail(`final: ${p.id} holds the same heads as ${rep.id} but a different state`)
      }
      // Block texts edited concurrently (sim/ytext-workload.ts) read the same everywhere.
      for (const [block, a, b] of await textsDiffer(rep.replica, p.replica)) {
        diverged = 1
        fail(`final: block ${block} reads ${a.slice(0, 40)} on ${rep.id} but ${b.slice(0, 40)} on ${p.id}`)
      }
    }
  }
  // Never-members get nothing at all.
  const everAdded = new Set(timeline.events.map((e) => e.identity))
  for (const p of peers.filter((x) => x.alive && !removed.has(x.account) && !everAdded.has(x.identity) && !owner.replica.acl.current().canRead(x.identity))) {
    // A member adversary may relay what it holds to anyone (replays): then a never-member may
    // hold ciphertext, but must reach no read key.
    const reads = [...rep.replica.acl.current().keys.keys()].filter((k) => new Keyring(rep.replica.acl, p.key).get(k) || p.replica.keyring.get(k))
    // An `add` that is void now (a member adversary's device, or an admin's concurrent with the
    // owner revoking the guest key, accepted a join before the record voiding it was written)
    // wrapped a key of its time to this account, and managers that had not seen what voids it
    // may have rotated to it as to any member: it reads what keys in the past of such grants
    // sealed (writes concurrent with the voiding record), never a key of a record that saw it.
    const acl = rep.replica.acl
    const grants = [...acl.entries.values()].filter((e) => {
      const r = e.record
      if (r.type === 'add') return r.identity === p.identity
      const rotation = r.type === 'rotate' || r.type === 'remove' ? r.rotation : undefined
      return rotation?.keys[p.identity] !== undefined && acl.stateAt(e.prevIds).canRead(p.identity)
    })
    const beyond = reads.filter((k) => !grants.some((g) => acl.precedesOrEquals(k, g.id)))
    if (hostile.length ? beyond.length > 0 : p.replica.known || p.replica.treeIds().length) {
      leakedReads++
      fail(`non-member ${p.id} ${hostile.length ? `reaches read keys ${beyond.join(',')}${grants.length ? ' beyond the past of the void grants to it' : ''}` : 'holds data of the space'}`)
    }
  }
  leakedReads += await checkLeaks('final', true)
  // Strangers get nothing either (junk roots adversaries made themselves are not the space's data).
  const junk = new Set(hostile.flatMap((h) => h.ledger.filter((c) => c.what === 'derived').map((c) => c.id)))
  for (const h of hostile.filter((x) => x.spec.role === 'stranger')) {
    const trees = h.peer.replica.treeIds().filter((t) => !junk.has(t))
    if (h.peer.replica.known || trees.length) {
      leakedReads++
      fail(`stranger ${h.peer.id} holds data of the space (${h.peer.replica.acl.entries.size} ACL records, trees ${trees.map((t) => t.slice(0, 6)).join(',')})`)
    }
  }
  // Seal-time leaks: a write sealed by a peer that had seen a removal, readable by the removed.
  const everyone = [...peers, ...hostile.map((h) => h.peer)]
  const sealed = acked.filter((w) => w.removedInView?.length)
  if (sealed.length) {
    const keyOf = (x: string) => everyone.find((p) => p.identity === x)?.key ?? accountKey(-1)
    const own = (x: string) => everyone.filter((p) => p.identity === x && p.alive).map((p) => p.replica)
    for (const l of await sealLeaks(rep.replica, sealed, keyOf, own)) {
      leakedReads++
      fail(`final: ${l}`)
    }
  }
  // What hostile peers sent: nothing forged or junk held, nothing void in effect.
  const judged = { void: 0, rejected: 0 }
  if (hostile.length) {
    const j = judge(hostile.flatMap((h) => h.ledger), timeline, owner.identity)
    judged.void = j.void.length
    judged.rejected = j.rejected.length
    // One line per violation, naming every member where it holds.
    const where = new Map<string, string[]>()
    for (const p of members) {
      for (const l of await voidOrForgedHeld(p.replica, j)) where.set(l, [...(where.get(l) ?? []), p.id])
    }
    for (const [l, ps] of where) {
      voidApplied++
      fail(`final: ${l} [on ${ps.join(',')}]`)
    }
  }
  checkMemory('final')

  // No acknowledged write lost: every converged member holds every one in its DAG (applied, or
  // voided by the removal rule), or the write would be refused there (a write by a removed
  // member that the removal rules reject).
  let lostWrites = 0
  for (const w of acked) {
    const lacking: string[] = []
    for (const p of members) if (!(await holds(p.replica, w.tree, w.id))) lacking.push(p.id)
    if (!lacking.length) continue
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
    // Written by a removed member after its removal existed (it had not seen it): void under
    // rule 1, and a session refuses a removed member's pushes before reading them.
    if (removed.has(w.account) && (report.voided?.includes(w.id) || (w.seq !== undefined && timeline.statusAt(identity(w.account), w.seq, owner.identity) === 'removed'))) continue
    // Written before its removal, but not in the removal's causal past (the remover had not seen
    // it): void by rule 1 as well. (The replica reports voided changes, not voided roots.)
    if (removed.has(w.account) && (await voidByRemoval(rep.replica, w.tree, w.id, raw))) continue
    lostWrites++
    fail(`acked ${w.kind} ${w.id} by ${w.peer} never reached ${lacking.join(',')} (offered to ${rep.id}: ${rejected ? `rejected ${rejected.reason}` : report.accepted.length ? 'accepted' : report.missing.length ? `missing ${report.missing.length} deps` : 'already held'})`)
  }

  const dropped: Record<string, number> = {}
  const rejected: Record<string, number> = {}
  for (const p of peers) {
    for (const c of p.session.allCounters().values()) {
      for (const [k, v] of Object.entries(c.dropped)) dropped[k] = (dropped[k] ?? 0) + v
      for (const [k, v] of Object.entries(c.rejected)) rejected[k] = (rejected[k] ?? 0) + v
    }
  }
  sharing?.finish()
  await opts.inspect?.(peers, hostile)
  for (const p of peers) sched.record(`final ${p.id} ${p.alive ? await p.replica.stateDigest() : 'down'}`)
  sched.record(`result diverged=${diverged} lost=${lostWrites} leaked=${leakedReads}${hostile.length ? ` void=${voidApplied} memory=${memoryOver}` : ''}`)
  const attacks: Partial<Record<AttackKind, number>> = {}
  for (const h of hostile) for (const [k, v] of Object.entries(h.counts)) attacks[k as AttackKind] = (attacks[k as AttackKind] ?? 0) + v
  return {
    seed, peers: cfg.peers, faults: cfg.faults, diverged, lostWrites, leakedReads, voidApplied, memoryOver, memory, attacks, adversaries: hostile.length, livenessRounds,
    ackedWrites: acked.length, traceHash: sched.traceHash(), failures, tail: [...sched.tail],
    stats: {
      events: sched.executed, virtualMs: sched.now, messages: net.stats.sent, bytes: net.stats.bytes, lost: net.stats.lost,
      duplicated: net.stats.duplicated, cutDrops: net.stats.cut, crashes: peers.reduce((n, p) => n + p.crashes, 0),
      rounds: rounds.total, roundsOk: rounds.ok, roundsInSync: rounds.inSync, removed: removed.size, members: members.length,
      dropped, rejected, outcomes: rounds.outcomes, judgedVoid: judged.void, judgedRejected: judged.rejected,
      ...(sharing ? { sharing: { ...sharing.stats } } : {}),
    },
  }
}

export type { SimConfig }
