/**
 * The ACL workload with more than one admin (docs/simulation.md, "Concurrent admins"): the
 * owner grants admin at setup, then any honest admin adds, removes (by `remove` or by role
 * `none`), changes roles and rotates, while partitions cut one of two acting admins off, so
 * their records are truly concurrent. Member adversaries are removed by honest admins and
 * sometimes re-added, concurrently with the removal or after it.
 */
import type { Role } from '../sync/acl/records.ts'
import type { AdversarySpec, SimConfig } from './config.ts'
import type { SimNetwork } from './network.ts'
import type { SimPeer } from './peer.ts'
import type { Prng } from './prng.ts'
import type { Scheduler } from './scheduler.ts'
import type { Timeline } from './timeline.ts'
import type { AckedWrite } from './workload.ts'

export interface AclContext {
  sched: Scheduler
  net: SimNetwork
  r: Prng
  cfg: SimConfig
  peers: SimPeer[]
  owner: SimPeer
  spaceId: string
  acked: AckedWrite[]
  /** Honest accounts an honest record removed, with that record. */
  removed: Map<number, string>
  timeline: Timeline
  identity: (account: number) => string
  inSafety: () => boolean
  /** Peer ids on the network now (honest and hostile), for cutting one off. */
  allIds: () => string[]
}

type Act = (actor: SimPeer) => Promise<string | undefined>

/** Honest actions on the ACL, scheduled over the safety phase by whichever admins hold the right. */
export class AclWorkload {
  constructor(private readonly c: AclContext) {}

  private get T() {
    return this.c.cfg.safetyMs
  }

  /** Honest admins (owner first, then by seniority of their grant). */
  private admins(): SimPeer[] {
    const accounts = [0, ...this.c.cfg.acl.admins]
    return accounts.map((a) => this.c.peers.find((p) => p.account === a)!).filter(Boolean)
  }

  /** An alive honest admin (in its own view), other than `not`, preferring `prefer`. */
  private actor(not?: SimPeer, prefer?: SimPeer): SimPeer | undefined {
    const ok = (p: SimPeer) => p !== not && p.alive && p.replica.acl.current().canManage(p.identity)
    if (prefer && ok(prefer)) return prefer
    const cands = this.admins().filter(ok)
    return cands.length ? this.c.r.pick(cands) : undefined
  }

  /** Runs `act` at `at` by an admin chosen then (or `who`), retrying while none is up. */
  private at(label: string, at: number, act: Act, who?: () => SimPeer | undefined, tries = 8) {
    this.c.sched.at(at, label, async () => {
      if (!this.c.inSafety()) return
      const a = who ? who() : this.actor()
      if (!a) {
        if (tries > 0) this.at(label, this.c.sched.now + 1000, act, who, tries - 1)
        return
      }
      try {
        this.c.sched.record(`${label} by ${a.id}: ${(await act(a)) ?? 'nothing to do'}`)
      } catch (err) {
        this.c.sched.record(`${label} by ${a.id}: failed ${(err as Error).name} ${(err as Error).message}`)
      }
    })
  }

  private ack(a: SimPeer, id: string, kind: string) {
    this.c.acked.push({ id, tree: this.c.spaceId, peer: a.id, account: a.account, kind, at: this.c.sched.now })
  }

  private async add(a: SimPeer, target: string, role: Exclude<Role, 'owner'>, kind = 'add') {
    const id = await a.replica.addMember(target, role)
    this.ack(a, id, kind)
    this.c.timeline.record({ identity: target, kind: 'add', role, id, author: a.identity })
    return id
  }

  private async remove(a: SimPeer, target: string, byRole: boolean) {
    const id = byRole ? await a.replica.setRole(target, 'none') : await a.replica.removeMember(target)
    this.ack(a, id, byRole ? 'role none' : 'remove')
    this.c.timeline.record({ identity: target, kind: 'remove', role: 'none', id, author: a.identity })
    return id
  }

  private async role(a: SimPeer, target: string, role: Exclude<Role, 'owner'>) {
    const id = await a.replica.setRole(target, role)
    this.ack(a, id, 'role')
    this.c.timeline.record({ identity: target, kind: 'role', role, id, author: a.identity })
    return id
  }

  /** Cuts every link of `p` for `ms`. */
  private isolate(p: SimPeer, ms: number) {
    const { net, sched } = this.c
    const others = this.c.allIds().filter((x) => x !== p.id)
    others.forEach((x) => net.cut(p.id, x))
    sched.record(`isolate ${p.id} for ${ms} ms`)
    sched.after(ms, `isolate ${p.id} heal`, () => others.forEach((x) => net.restore(p.id, x)))
  }

  /** Honest members an admin may remove or demote: not the owner, not an admin, not removed. */
  private plainMembers(a: SimPeer): number[] {
    const st = a.replica.acl.current()
    const admins = new Set(this.c.cfg.acl.admins)
    return [...new Set(this.c.cfg.accounts)].filter((x) => x !== 0 && !admins.has(x) && !this.c.removed.has(x) && st.canRead(this.c.identity(x)))
  }

  /** Setup, before faults: the owner grants admin (by role, or by an add for a fresh member). */
  async grantAdmins() {
    for (const a of this.c.cfg.acl.admins) {
      const id = await this.c.owner.replica.setRole(this.c.identity(a), 'admin')
      this.ack(this.c.owner, id, 'role')
      this.c.timeline.record({ identity: this.c.identity(a), kind: 'role', role: 'admin', id, author: this.c.owner.identity })
    }
  }

  /** The honest schedule: late members, removals, and the concurrent episodes. */
  scheduleHonest() {
    const { r, cfg } = this.c
    for (const acc of cfg.lateMembers) {
      this.at(`add ${acc}`, r.int(Math.floor(this.T * 0.7)), (a) => this.add(a, this.c.identity(acc), 'writer'))
    }
    for (let i = 0; i < cfg.removals; i++) {
      const byRole = r.chance(0.3)
      this.at('remove', Math.floor(this.T * (0.3 + r.float() * 0.5)), async (a) => {
        const cands = this.plainMembers(a)
        if (!cands.length) return undefined
        const x = r.pick(cands)
        const id = await this.remove(a, this.c.identity(x), byRole)
        this.c.removed.set(x, id)
        return `${x} ${id}${byRole ? ' (role none)' : ''}`
      })
    }
    const admins = this.admins()
    if (admins.length < 2) return
    for (let e = 0; e < cfg.acl.episodes; e++) {
      const t = Math.floor(this.T * (0.15 + 0.6 * r.float()))
      const dur = r.range(2000, 6000)
      const [A, B] = r.shuffle(admins).slice(0, 2)
      this.c.sched.at(t, `episode ${e}: ${A.id} cut off, ${B.id} acts too`, () => {
        if (this.c.inSafety() && A.alive) this.isolate(A, dur)
      })
      const mutual = e === 0 && cfg.acl.mutualRemoval && A.account !== 0 && B.account !== 0
      for (const [who, other] of [
        [A, B],
        [B, A],
      ] as const) {
        const when = t + r.range(50, Math.floor(dur / 2))
        const kind = mutual ? 'mutual' : r.pick(['role', 'rotate', 'remove', 'roleNone', 'role'] as const)
        this.at(
          `episode ${e} ${kind}`,
          when,
          (a) => this.episodeAction(a, kind, other),
          () => this.actor(undefined, who),
          2,
        )
      }
    }
  }

  private async episodeAction(a: SimPeer, kind: 'role' | 'rotate' | 'remove' | 'roleNone' | 'mutual', other: SimPeer): Promise<string | undefined> {
    const { r } = this.c
    if (kind === 'rotate') return a.replica.rotateReadKey().then((id) => (this.ack(a, id, 'rotate'), id))
    if (kind === 'mutual') {
      const id = await this.remove(a, other.identity, false)
      this.c.removed.set(other.account, id)
      return `${other.id} ${id}`
    }
    const cands = this.plainMembers(a)
    if (!cands.length) return undefined
    const x = r.pick(cands)
    if (kind === 'role') {
      const now = a.replica.acl.current().roleOf(this.c.identity(x))
      return `${x} ${await this.role(a, this.c.identity(x), now === 'reader' ? 'writer' : 'reader')}`
    }
    const id = await this.remove(a, this.c.identity(x), kind === 'roleNone')
    this.c.removed.set(x, id)
    return `${x} ${id}`
  }

  /**
   * A member adversary is removed by an honest admin; maybe re-added by another one while the
   * remover is cut off (concurrent) or after, and maybe removed again.
   */
  scheduleAdversary(s: AdversarySpec, identity: string) {
    const { r } = this.c
    const t = Math.floor(this.T * s.removeAt)
    const concurrent = s.readd === 'concurrent'
    let remover: SimPeer | undefined
    const role: Exclude<Role, 'owner'> = s.role === 'admin' ? 'admin' : 'writer'
    this.at(`remove x${s.index}`, t, async (a) => {
      remover = a
      if (concurrent) this.isolate(a, r.range(2000, 5000))
      return this.remove(a, identity, r.chance(0.3))
    })
    if (s.readd === 'never') return
    const readdAt = concurrent ? t + r.range(200, 1500) : t + Math.floor(this.T * (0.1 + 0.1 * r.float()))
    // Only the owner grants admin; another admin re-adds as a writer.
    this.at(
      `re-add x${s.index}`,
      readdAt,
      (a) => this.add(a, identity, a.account === 0 ? role : 'writer', 're-add'),
      () => this.actor(remover),
    )
    if (s.removeAgain) {
      this.at(`remove x${s.index} again`, readdAt + Math.floor(this.T * (0.1 + 0.1 * r.float())), (a) => this.remove(a, identity, false))
    }
  }
}
