/**
 * Sharing between accounts in the simulator (docs/simulation.md, "Accounts"): admins mint
 * invites while writes and the other ACL work go on; accounts that are not members sign join
 * requests and repeat them over the simulated wire with the daemon's JoinDriver (the `join`
 * message, answered by `SpaceReplica.ingestJoin` on every peer that holds the space), exactly as
 * the daemon's SharingNetwork does; admins accept or decline pending requests, joiners withdraw
 * some; guests join through the owner's guest key and any manager device that sees their request
 * accepts it; the owner revokes the guest key, removing every guest with a key rotation.
 */
import type { Role } from '../sync/acl/records.ts'
import type { CryptoProvider } from '../sync/crypto/provider.ts'
import type { MintedInvite } from '../sync/replica/acl-writer.ts'
import { makeCancelChange, makeJoinChange } from '../sync/replica/join-change.ts'
import type { JoinStatusEvent } from '../sync/protocol/sharing-network.ts'
import type { JoinerSpec, SimConfig } from './config.ts'
import type { SimPeer } from './peer.ts'
import type { Prng } from './prng.ts'
import type { Scheduler } from './scheduler.ts'
import type { Timeline } from './timeline.ts'
import type { AckedWrite } from './workload.ts'

export interface SharingContext {
  sched: Scheduler
  r: Prng
  cfg: SimConfig
  crypto: CryptoProvider
  peers: SimPeer[]
  owner: SimPeer
  spaceId: string
  acked: AckedWrite[]
  removed: Map<number, string>
  timeline: Timeline
  identity: (account: number) => string
  inSafety: () => boolean
}

/** How often a deciding admin looks for the request, and for how long it keeps looking. */
const DECIDE_EVERY_MS = 600
const DECIDE_TRIES = 40

interface Joiner {
  spec: JoinerSpec
  peer: SimPeer
  joinId?: string
  /** Whether the timeline has the add that accepted it. */
  recorded: boolean
  settled: boolean
}

export class SharingWorkload {
  readonly stats = { invites: 0, joins: 0, accepted: 0, declined: 0, cancelled: 0, guestRevokes: 0, answers: 0, joinedMembers: 0 }
  private readonly joiners: Joiner[] = []
  private guestInvite?: MintedInvite

  constructor(private readonly c: SharingContext) {}

  private get T() {
    return this.c.cfg.safetyMs
  }

  private admins(): SimPeer[] {
    return [0, ...this.c.cfg.acl.admins].map((a) => this.c.peers.find((p) => p.account === a)!).filter(Boolean)
  }

  private canManage(p: SimPeer) {
    return p.alive && p.replica.acl.current().canManage(p.identity)
  }

  /** Runs `act` at `at`, retrying every second (at most `tries` times) while `who` finds nobody. */
  private at(label: string, at: number, who: () => SimPeer | undefined, act: (a: SimPeer) => Promise<string | undefined>, tries = 8) {
    this.c.sched.at(at, label, async () => {
      if (!this.c.inSafety()) return
      const a = who()
      if (!a) {
        if (tries > 0) this.at(label, this.c.sched.now + 1000, who, act, tries - 1)
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

  /** A joining peer got a `joined` answer: it stops asking once it reads the space, or was refused for good. */
  onJoinStatus(p: SimPeer, e: JoinStatusEvent) {
    this.stats.answers++
    const j = this.joiners.find((x) => x.peer === p)
    if (!j) return
    if (e.status === 'declined' || e.status === 'cancelled' || (e.status === 'accepted' && p.replica.acl.current().canRead(p.identity))) {
      p.stopJoin()
      this.c.sched.record(`join ${p.id}: ${e.status} (answered by ${e.peer}), stops asking`)
    }
  }

  schedule() {
    const { r, cfg } = this.c
    for (const spec of cfg.sharing.joiners) {
      const peer = this.c.peers.find((p) => p.account === spec.account)
      if (!peer) continue
      const j: Joiner = { spec, peer, recorded: false, settled: false }
      this.joiners.push(j)
      const owner = () => (this.canManage(this.c.owner) ? this.c.owner : undefined)
      const admin = () => {
        const up = this.admins().filter((p) => this.canManage(p))
        return up.length ? r.pick(up) : undefined
      }
      this.at(`invite for ${peer.id} (${spec.permission})`, Math.floor(this.T * spec.at), spec.permission === 'guest' ? owner : admin, async (a) => {
        const inv = await this.mint(a, spec)
        this.c.sched.after(r.range(50, 800), `join ${peer.id}`, () => this.join(j, inv))
        return inv.recordId
      })
    }
    if (cfg.sharing.guestRevokeAt !== undefined) {
      this.at(
        'revoke the guest key',
        Math.floor(this.T * cfg.sharing.guestRevokeAt),
        () => (this.canManage(this.c.owner) ? this.c.owner : undefined),
        (a) => this.revokeGuest(a),
      )
    }
    // Guests are accepted by whichever manager device sees them first: the timeline learns of it here.
    for (let t = 500; t < this.T; t += 500) this.c.sched.at(t, 'sharing watch', () => this.watch())
  }

  /** At the end: joiners the owner's converged ACL lets read (accepted, not removed since). */
  finish() {
    const st = this.c.owner.replica.acl.current()
    this.stats.joinedMembers = this.joiners.filter((j) => j.joinId && st.canRead(j.peer.identity)).length
  }

  /** An invite: the guest key is minted once and reused until revoked (POST {S}/guest-key is idempotent). */
  private async mint(a: SimPeer, spec: JoinerSpec): Promise<MintedInvite> {
    if (
      spec.permission === 'guest' &&
      this.guestInvite &&
      a.replica.acl
        .current()
        .invites()
        .some((i) => i.recordId === this.guestInvite!.recordId)
    )
      return this.guestInvite
    const inv = await a.replica.createInvite(spec.permission, { replaces: spec.permission !== 'guest' && spec.replaces })
    this.ack(a, inv.recordId, 'invite')
    this.stats.invites++
    if (spec.permission === 'guest') this.guestInvite = inv
    return inv
  }

  /** The joiner signs its request (it knows only the space id and the token) and starts asking. */
  private async join(j: Joiner, inv: MintedInvite) {
    if (!this.c.inSafety()) return
    const p = j.peer
    const item = await makeJoinChange({
      spaceId: this.c.spaceId,
      inviteId: inv.recordId,
      invitePrivateKey: inv.privateKey,
      me: p.key,
      metadata: { name: p.id },
      crypto: this.c.crypto,
      env: p.env,
    })
    j.joinId = item.id
    this.stats.joins++
    p.askJoin(item.raw)
    this.c.sched.record(`join ${p.id} asks ${item.id} (invite ${inv.recordId})`)
    const { r } = this.c
    if (j.spec.outcome === 'cancel') {
      this.c.sched.after(r.range(300, 4000), `cancel ${p.id}`, async () => {
        if (!this.c.inSafety() || !p.joinChange) return
        const cancel = await makeCancelChange({ spaceId: this.c.spaceId, joinId: item.id, me: p.key, crypto: this.c.crypto, env: p.env })
        p.askJoin(cancel.raw)
        this.stats.cancelled++
        this.c.sched.record(`join ${p.id} withdraws ${item.id} with ${cancel.id}`)
      })
    } else if (j.spec.permission !== 'guest') {
      this.decide(j, r.range(300, 3000), DECIDE_TRIES)
    }
  }

  /** An admin that lists the request as pending accepts (or declines) it. */
  private decide(j: Joiner, after: number, tries: number) {
    this.c.sched.after(after, `decide ${j.peer.id}`, async () => {
      if (!this.c.inSafety() || j.settled || tries <= 0) return
      const id = j.joinId!
      const deciders = this.admins().filter(
        (a) =>
          this.canManage(a) &&
          a.replica.acl
            .current()
            .requests()
            .some((q) => q.recordId === id && q.status === 'pending'),
      )
      if (!deciders.length) {
        // Nobody holds it yet, or it is settled already (its invite replaced, withdrawn, decided elsewhere).
        const settled = this.admins().some(
          (a) =>
            a.alive &&
            a.replica.acl
              .current()
              .requests()
              .some((q) => q.recordId === id && q.status !== 'pending'),
        )
        if (settled) j.settled = true
        else this.decide(j, DECIDE_EVERY_MS, tries - 1)
        return
      }
      const a = this.c.r.pick(deciders)
      try {
        if (j.spec.outcome === 'accept') {
          const add = await a.replica.acceptJoin(id)
          this.ack(a, add, 'accept')
          const role: Role = j.spec.permission
          this.c.timeline.record({ identity: j.peer.identity, kind: 'add', role, id: add, author: a.identity })
          j.recorded = true
          this.stats.accepted++
          this.c.sched.record(`accept ${j.peer.id} by ${a.id}: ${add}`)
        } else {
          const dec = await a.replica.declineJoin(id)
          this.ack(a, dec, 'decline')
          this.stats.declined++
          this.c.sched.record(`decline ${j.peer.id} by ${a.id}: ${dec}`)
        }
        j.settled = true
      } catch (err) {
        this.c.sched.record(`decide ${j.peer.id} by ${a.id}: failed ${(err as Error).message}`)
        this.decide(j, DECIDE_EVERY_MS, tries - 1)
      }
    })
  }

  /** Records guest accepts made by heal (any manager's device) in the timeline, once each. */
  private watch() {
    for (const j of this.joiners) {
      if (j.recorded || !j.joinId || j.spec.permission !== 'guest') continue
      for (const a of this.admins()) {
        if (!a.alive) continue
        const q = a.replica.acl
          .current()
          .requests()
          .find((x) => x.recordId === j.joinId)
        if (q?.status !== 'accepted' || !q.decidedBy) continue
        const e = a.replica.acl.entries.get(q.decidedBy)
        this.c.timeline.record({ identity: j.peer.identity, kind: 'add', role: 'guest', id: q.decidedBy, author: e?.author ?? a.identity })
        j.recorded = true
        this.stats.accepted++
        this.c.sched.record(`guest ${j.peer.id} accepted by ${q.decidedBy}`)
        break
      }
    }
  }

  /** The owner revokes the guest key: guest invites die and every guest is removed, rotating the key. */
  private async revokeGuest(a: SimPeer): Promise<string> {
    const ids = await a.replica.revokeGuest()
    this.guestInvite = undefined
    this.stats.guestRevokes++
    const out: string[] = []
    for (const id of ids) {
      this.ack(a, id, 'guest revoke')
      const rec = a.replica.acl.entries.get(id)?.record
      if (rec?.type !== 'remove') continue
      const peer = this.c.peers.find((p) => p.identity === rec.identity)
      this.c.timeline.record({ identity: rec.identity, kind: 'remove', role: 'none', id, author: a.identity })
      if (peer) this.c.removed.set(peer.account, id)
      out.push(`${peer?.id ?? rec.identity.slice(0, 6)} ${id}`)
    }
    return `${ids.length} records; removed ${out.join(', ') || 'no guest'}`
  }
}
