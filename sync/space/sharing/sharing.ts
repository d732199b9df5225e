import { SvcError } from '../../core/errors.ts'
import { errField } from '../../core/log.ts'
import { isPairSpace } from '../one-to-one.ts'
import { SerialQueue } from '../../core/serial-queue.ts'
import type { Env } from '../../core/env.ts'
import type { CryptoProvider } from '../../crypto/provider.ts'
import type { Json, Op } from '../../crdt/ops.ts'
import { identityOf, publicKeyOf, type KeyPair } from '../../crypto/keys.ts'
import type { AclState } from '../../acl/state.ts'
import type { Role } from '../../acl/records.ts'
import { instant } from '../rows.ts'
import { TECH_DS } from '../schema.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { rowStatus, type AccountEngine, type SpaceInfo, type SpaceRow } from '../account-engine.ts'
import { byIdentity, LISTED, memberDiff, membersOf, type JoinRequestView, type MemberFrame, type MemberInfo } from './members.ts'
import type { DeletedReason, Grantable } from './rows.ts'
import { SHARING_LIMITS } from '../../core/limits.ts'
import { Invites } from './invites.ts'
import { Joins, type JoinAnswer } from './joins.ts'
import type { SharingNetwork } from '../../core/sharing-network.ts'

/** What the account engine lends the sharing flows: its rows and its set of held spaces. */
export interface SharingHooks {
  key: KeyPair
  env: Env
  crypto: CryptoProvider
  row(spaceId: string): Promise<SpaceRow | undefined>
  rows(): Promise<SpaceRow[]>
  writeRow(row: SpaceRow): Promise<void>
  /** Opens (and announces) a space this device does not hold yet. */
  open(spaceId: string): Promise<SpaceEngine>
  /** Forgets a held space (its row is deleted). */
  drop(spaceId: string): void
}

/**
 * The account-level side of sharing (docs/sharing.md "Flows and states"): members and their
 * roles, direct adds and the `invite_pending` rows they leave, and every row status a join,
 * an invite or a guest key moves. Rows are tech-space records, so each move reaches the
 * account's other devices; every decision reads the merged ACL, so every device decides alike.
 */
export class Sharing {
  readonly me: string
  /** Spaces a peer offered us (wire's `offered`), opened until their ACL says whether we are in. */
  private readonly offers = new Map<string, string>()
  /** Row moves run one at a time: two ACL events must not race on one row. */
  private readonly settling = new SerialQueue()
  /** Invites and the guest key of spaces this account manages. */
  readonly invites: Invites
  /** This account's own joins (the joiner's side). */
  readonly joins: Joins

  constructor(
    private readonly account: AccountEngine,
    private readonly h: SharingHooks,
  ) {
    this.me = identityOf(h.key.publicKey)
    this.invites = new Invites(account, h.env, this.me)
    this.joins = new Joins({
      me: this.me,
      key: h.key,
      env: h.env,
      crypto: h.crypto,
      row: (id) => h.row(id),
      writeRow: (row) => this.writeRow(row),
      patchRow: (id, fields) => this.patchRow(id, fields),
      softDelete: (id, reason) => this.softDelete(id, reason),
      held: (id) => account.held(id),
      open: (id) => h.open(id),
      info: (id) => account.info(id),
      acceptInvite: (id) => this.acceptInvite(id),
      log: account.log.child('joins'),
    })
    account.events.on('members', ({ space }) => void this.settle(space.spaceId))
    // Rows also move on the account's other devices.
    account.tech.events.on('change', (c) => {
      if (c.records.get(account.techObject)?.has(TECH_DS.spaces) || c.reloaded.has(account.techObject)) void this.refreshGates()
    })
  }

  /** Spaces held here whose row says the account may not use them yet (see `gate`). */
  private gates = new Map<string, 'joining' | 'invite_pending'>()

  /**
   * Refuses content routes of a space whose row is pending: 409 `space.not_accepted` while our
   * join awaits a manager, 403 `space.not_joined` while a direct add awaits our accept. The
   * engine is open (sync fills it) but nothing in it is the account's to read or write yet.
   */
  gate(spaceId: string): void {
    const g = this.gates.get(spaceId)
    if (g === 'joining') throw new SvcError('space.not_accepted', 'the join of this space awaits approval', { spaceId })
    if (g === 'invite_pending') throw new SvcError('space.not_joined', 'accept the invite to this space first (POST {S}/invite/accept)', { spaceId })
  }

  /** Re-reads the pending rows (at boot, and whenever the spaces list moves). */
  async refreshGates(): Promise<void> {
    const run = ++this.gateRuns
    const next = new Map<string, 'joining' | 'invite_pending'>()
    for (const row of await this.h.rows()) {
      const status = rowStatus(row)
      if (status === 'joining' || status === 'invite_pending') next.set(row.spaceId, status)
    }
    // Reads overlap: one that started earlier may finish later with older rows.
    if (run > this.gateApplied) {
      this.gateApplied = run
      this.gates = next
    }
  }
  private gateRuns = 0
  private gateApplied = 0

  /** The daemon's P2P side, once attached (absent in tests without a network and in the simulator). */
  private net?: SharingNetwork

  /**
   * Wires the flows to the network: our joins and cancels go out (and again, with wire's
   * backoff, until answered), answers move the joining rows, offers open spaces to fetch
   * their ACL from the offering device.
   */
  attach(net: SharingNetwork): () => void {
    this.net = net
    const stops = [
      net.onOffer((o) => this.onOffer(o.spaceId, o.identity, o.peer)),
      net.onJoinStatus((e) => void this.onJoinAnswer(e.spaceId, e.status, e.peer)),
      this.joins.events.on('send', (j) => net.join(j.spaceId, j.change)),
    ]
    // Joins left pending by an earlier run, or sent from another device of this account.
    void this.outgoingJoins()
      .then((list) => {
        for (const j of list) net.join(j.spaceId, j.change)
      })
      .catch((err: unknown) => this.account.log.warn('resending pending join requests failed', { err: errField(err) }))
    return () => {
      for (const stop of stops) stop()
      if (this.net === net) this.net = undefined
    }
  }

  private async onOffer(spaceId: string, from: string, peer: string): Promise<void> {
    if (from === this.me) return
    // A one-to-one space is derived from the two accounts and has its own path (one-to-one.ts).
    if (isPairSpace(spaceId, from, this.me)) {
      if ((await this.account.oneToOne.offered(spaceId, from)) && this.net) await this.net.syncWith(spaceId, peer).catch(() => false)
      return
    }
    await this.offered(spaceId, from)
    if (!this.offers.has(spaceId) || !this.net) return
    await this.net.syncWith(spaceId, peer).catch(() => false)
    await this.settle(spaceId)
    // Its ACL does not list us (or never came): forget the space until another offer.
    if (this.offers.has(spaceId)) this.dropOffer(spaceId)
  }

  /**
   * A device holding the space answered our join. Its `accepted` is only a claim: we sync with
   * it, and the row turns active only if the ACL we get lists us. `declined` and `cancelled`
   * settle the row (a soft delete: the token may ask again).
   */
  private async onJoinAnswer(spaceId: string, status: JoinAnswer, peer: string): Promise<void> {
    await this.joins.answered(spaceId, status)
    if (status === 'declined' || status === 'cancelled') this.net?.stopJoin(spaceId)
    if (status !== 'accepted' || !this.net) return
    await this.net.syncWith(spaceId, peer).catch(() => false)
    await this.settle(spaceId)
  }

  /** Re-reads a space's ACL and moves its row to match; resolves once done. */
  settle(spaceId: string): Promise<void> {
    return this.settling
      .run(() => this.reconcile(spaceId))
      .catch((err: unknown) => this.account.log.warn("moving a space's row to match its ACL failed", { spaceId, err: errField(err) }))
  }

  // ------------------------------------------------------------------ members

  /** Member records of a held space; `all` adds removed, declined and cancelled ones. */
  members(spaceId: string, all = false): MemberInfo[] {
    const list = this.memberList(this.account.space(spaceId))
    return all ? list : list.filter((m) => LISTED.has(m.status))
  }

  private memberList(space: SpaceEngine): MemberInfo[] {
    const st = space.replica.acl.current()
    const profiles = new Map<string, { name?: string; iconCid?: string }>()
    for (const p of space.replica.profiles()) if (p.profile) profiles.set(p.identity, p.profile)
    return membersOf(st, this.me, requestsOf(st), profiles)
  }

  /**
   * This account's own record (`{S}/members/me`): from the ACL once the space is readable, from
   * the row while a join or an invite is pending or after it settled on our side.
   */
  async memberMe(spaceId: string): Promise<MemberInfo> {
    const row = await this.h.row(spaceId)
    if (!row) throw new SvcError('space.not_found', 'space not found', { spaceId })
    const status = rowStatus(row)
    const space = this.account.held(spaceId)
    const mine = space?.replica.known ? this.memberList(space).find((m) => m.self) : undefined
    const base: MemberInfo = mine ?? { identity: this.me, role: 'none', status: 'removed', name: '', iconCid: '', self: true }
    if (status === 'joining') return { ...base, status: base.status === 'active' ? 'active' : 'pending' }
    if (status === 'invite_pending') return { ...base, status: 'invited' }
    if (status === 'deleted' && row.deletedReason === 'declined' && row.join) return { ...base, status: 'declined' }
    if (status === 'deleted' && row.deletedReason === 'withdrawn') return { ...base, status: 'cancelled' }
    return base
  }

  /**
   * Puts accounts on the ACL directly (`POST {S}/acl/add`), the current read key wrapped to
   * each. Members already holding a role are left as they are. Each added account's device
   * learns of it when a peer offers the space (wire) and shows an `invite_pending` row.
   */
  async addMembers(spaceId: string, identities: string[], permission: Grantable): Promise<{ added: string[]; unchanged: string[] }> {
    const space = this.account.space(spaceId)
    const st = this.managing(space)
    if (permission === 'admin' && st.owner !== this.me) throw new SvcError('acl.forbidden', 'only the owner grants admin', { spaceId })
    for (const id of identities) {
      publicKeyOf(id)
      if (id === this.me) throw new SvcError('request.invalid_field', 'an account cannot add itself', { field: 'identities' })
    }
    const added: string[] = []
    const unchanged: string[] = []
    for (const id of [...new Set(identities)]) {
      if (space.replica.acl.current().canRead(id)) unchanged.push(id)
      else {
        await space.replica.addMember(id, permission)
        added.push(id)
      }
    }
    return { added, unchanged }
  }

  /** Changes a member's role (`PATCH {S}/members/:identity`); only the owner grants or changes admin. */
  async setRole(spaceId: string, identity: string, role: Grantable): Promise<void> {
    const space = this.account.space(spaceId)
    const st = this.managing(space)
    const current = this.target(st, spaceId, identity)
    if (current === role) return
    if ((role === 'admin' || current === 'admin') && st.owner !== this.me)
      throw new SvcError('acl.forbidden', "only the owner grants admin or changes an admin's role", { spaceId })
    await space.replica.setRole(identity, role)
  }

  /**
   * Removes a member (`DELETE {S}/members/:identity`): a `remove` record that rotates the read
   * key to everyone who stays, so nothing written after it is readable by the removed member.
   */
  async removeMember(spaceId: string, identity: string): Promise<void> {
    const space = this.account.space(spaceId)
    const st = this.managing(space)
    const current = this.target(st, spaceId, identity)
    if (current === 'admin' && st.owner !== this.me) throw new SvcError('acl.forbidden', 'only the owner removes an admin', { spaceId })
    await space.replica.removeMember(identity)
  }

  /**
   * `member` frames of a held space from now on (`{S}/members/subscribe`): the listing is
   * diffed on every ACL move of that space.
   */
  watchMembers(spaceId: string, emit: (frame: MemberFrame) => void): () => void {
    const space = this.account.space(spaceId)
    let last = byIdentity(this.memberList(space))
    return this.account.events.on('members', (e) => {
      if (e.space !== space) return
      const next = byIdentity(this.memberList(space))
      for (const f of memberDiff(last, next)) emit(f)
      last = next
    })
  }

  /** The merged ACL when this account manages the space, else 403 `acl.forbidden`. */
  private managing(space: SpaceEngine): AclState {
    const st = space.replica.acl.current()
    if (!st.canManage(this.me)) throw new SvcError('acl.forbidden', 'only an owner or admin manages members', { spaceId: space.spaceId })
    return st
  }

  /** The role of a member another manager may act on: not the owner, not ourselves. */
  private target(st: AclState, spaceId: string, identity: string): Role {
    const role = st.roleOf(identity)
    if (role === 'none') throw new SvcError('member.not_found', 'no member with that identity', { spaceId, identity })
    if (identity === st.owner) throw new SvcError('acl.forbidden', "the owner's role cannot change", { spaceId })
    if (identity === this.me) throw new SvcError('acl.forbidden', 'change your own membership by leaving the space (DELETE the space)', { spaceId })
    return role
  }

  // ------------------------------------------------------------------ join requests (owner's side)

  /**
   * `POST {S}/acl/accept`: adds a pending request's joiner with its invite's role, the current
   * read key wrapped to it. 404 `acl.request_not_found`, 409 `space.join_not_pending` once the
   * request is settled (accepted, declined, cancelled; a guest request through a revoked guest key is declined).
   */
  async acceptRequest(spaceId: string, which: { request?: string; identity?: string }): Promise<MemberInfo> {
    const space = this.account.space(spaceId)
    const st = this.managing(space)
    const req = this.pendingRequest(st, spaceId, which)
    if (req.role === 'admin' && st.owner !== this.me) throw new SvcError('acl.forbidden', 'only the owner grants admin', { spaceId })
    await space.replica.acceptJoin(req.recordId)
    return this.memberList(space).find((m) => m.identity === req.joiner)!
  }

  /** `POST {S}/acl/decline`: settles a pending request as declined (the joiner's row follows). */
  async declineRequest(spaceId: string, which: { request?: string; identity?: string }): Promise<void> {
    const space = this.account.space(spaceId)
    const st = this.managing(space)
    const req = this.pendingRequest(st, spaceId, which)
    await space.replica.declineJoin(req.recordId)
  }

  /** Joins and cancels wire must (re)send to peers holding their spaces. */
  async outgoingJoins() {
    return this.joins.outgoing(await this.h.rows())
  }

  /** `POST {S}/acl/cancel-join`: the joiner withdraws its own pending join. */
  cancelJoin(spaceId: string): Promise<void> {
    return this.joins.cancel(spaceId)
  }

  private pendingRequest(st: AclState, spaceId: string, which: { request?: string; identity?: string }) {
    const all = st.requests()
    const req = which.request !== undefined ? all.find((r) => r.recordId === which.request) : all.filter((r) => r.joiner === which.identity).at(-1)
    if (!req) throw new SvcError('acl.request_not_found', 'no join request with that id or identity', { spaceId })
    if (req.status !== 'pending' || !req.role) throw new SvcError('space.join_not_pending', `the join request is ${req.status}`, { spaceId })
    return req
  }

  // ------------------------------------------------------------------ offers and invite_pending

  /**
   * A peer offered a space we do not hold (wire's `offered`): open it so sync fetches its ACL;
   * the row appears (`invite_pending`) only once that ACL lists this account. Bounded: past
   * SHARING_LIMITS.maxOffersInFlight unverified offers, new ones are ignored until one settles.
   */
  async offered(spaceId: string, from: string): Promise<void> {
    if (this.account.held(spaceId) || this.offers.has(spaceId)) return
    if (this.offers.size >= SHARING_LIMITS.maxOffersInFlight) return
    const row = await this.h.row(spaceId)
    if (row && (row.deletedAt || rowStatus(row) !== 'deleted')) return
    this.offers.set(spaceId, from)
    await this.h.open(spaceId)
    await this.settle(spaceId)
  }

  /** Gives up an offer whose ACL never listed us (wire decides when). */
  dropOffer(spaceId: string): void {
    if (!this.offers.delete(spaceId)) return
    void this.h.row(spaceId).then((row) => {
      if (!row || rowStatus(row) === 'deleted') this.h.drop(spaceId)
    })
  }

  /** Spaces offered to us whose ACL has not listed this account yet. */
  pendingOffers(): string[] {
    return [...this.offers.keys()]
  }

  /** `POST {S}/invite/accept`: 200 once the space is readable here, 202 while its content is on its way. */
  async acceptInvite(spaceId: string): Promise<{ info: SpaceInfo; ready: boolean }> {
    const row = await this.h.row(spaceId)
    if (!row) throw new SvcError('space.not_found', 'space not found', { spaceId })
    if (rowStatus(row) !== 'invite_pending') throw new SvcError('space.not_invite_pending', 'this space has no pending invite', { spaceId })
    await this.patchRow(spaceId, { status: 'active' })
    const space = this.account.held(spaceId) ?? (await this.h.open(spaceId))
    const st = space.replica.acl.current()
    const ready = st.readKeyId !== undefined && !!space.replica.keyring.get(st.readKeyId)
    return { info: await this.account.info(spaceId), ready }
  }

  /**
   * `POST {S}/invite/decline`: the row turns `deleted` (reason declined), on every device of the
   * account. Sticky for the add that offered it; a later add, or a join, brings it back.
   */
  async declineInvite(spaceId: string): Promise<void> {
    const row = await this.h.row(spaceId)
    if (!row) throw new SvcError('space.not_found', 'space not found', { spaceId })
    if (rowStatus(row) !== 'invite_pending') throw new SvcError('space.not_invite_pending', 'this space has no pending invite', { spaceId })
    await this.softDelete(spaceId, 'declined')
  }

  // ------------------------------------------------------------------ leaving

  /**
   * DELETE {S} on a row that must not become a sticky tombstone (docs/sharing.md): a pending
   * invite is declined, a pending join withdrawn, a guest copy dropped so a later guest token
   * re-adds it. Returns false for every other row (the caller writes the sticky tombstone).
   */
  async leave(row: SpaceRow): Promise<boolean> {
    const status = rowStatus(row)
    if (status === 'invite_pending') {
      await this.softDelete(row.spaceId, 'declined')
      return true
    }
    if (status === 'joining') {
      // Withdraw it for real when no decision is known, so the managers see it cancelled.
      await this.joins.cancel(row.spaceId).catch(async (err: unknown) => {
        if (!(err instanceof SvcError) || err.code !== 'space.join_not_pending') throw err
        await this.softDelete(row.spaceId, 'withdrawn')
      })
      return true
    }
    const role = this.account.held(row.spaceId)?.replica.acl.current().roleOf(this.me)
    if (status === 'guest_revoked' || role === 'guest') {
      await this.softDelete(row.spaceId, 'deleted')
      return true
    }
    return false
  }

  private async softDelete(spaceId: string, reason: DeletedReason) {
    await this.patchRow(spaceId, { status: 'deleted', deletedReason: reason })
    this.offers.delete(spaceId)
    this.h.drop(spaceId)
  }

  // ------------------------------------------------------------------ rows follow the ACL

  /**
   * Moves a row to what the space's merged ACL says of this account: a join accepted makes it
   * active, a join declined deleted (reason declined), a guest's removal guest_revoked, an
   * offered space that lists us invite_pending.
   */
  private async reconcile(spaceId: string): Promise<void> {
    const space = this.account.held(spaceId)
    if (!space || !space.replica.known) return
    const st = space.replica.acl.current()
    const role = st.roleOf(this.me)
    const row = await this.h.row(spaceId)
    const addId = this.grantOf(space)
    if (!row || (rowStatus(row) === 'deleted' && !row.deletedAt && row.deletedReason === 'declined' && row.offer && addId && addId !== row.offer.addId)) {
      const from = this.offers.get(spaceId)
      if (role === 'none' || role === 'owner' || !addId) return
      this.offers.delete(spaceId)
      const offer = { from: from ?? space.replica.acl.entries.get(addId)!.author, addId }
      const pending = (await this.h.rows()).filter((r) => rowStatus(r) === 'invite_pending' && r.offer?.from === offer.from)
      if (pending.length >= SHARING_LIMITS.maxPendingRowsPerIdentity) return
      if (!row) {
        await this.writeRow({ spaceId, spaceType: 'svc.space', derived: false, createdAt: instant(this.h.env.now()), status: 'invite_pending', offer })
      } else await this.patchRow(spaceId, { status: 'invite_pending', offer, deletedReason: null })
      return
    }
    const status = rowStatus(row)
    if (status === 'joining') {
      if (role !== 'none') {
        await this.patchRow(spaceId, { status: 'active' })
        this.net?.stopJoin(spaceId)
      } else if (row.join && requestsOf(st).some((r) => r.recordId === row.join!.changeId && r.status === 'declined')) {
        await this.softDelete(spaceId, 'declined')
      }
      return
    }
    if (status === 'active' && role === 'none' && this.wasGuest(space)) await this.patchRow(spaceId, { status: 'guest_revoked' })
  }

  /** The newest valid `add` of this account in the space's ACL (the grant that offered it). */
  private grantOf(space: SpaceEngine): string | undefined {
    const log = space.replica.acl
    const st = log.current()
    let best: { id: string; lamport: number } | undefined
    for (const e of log.entries.values()) {
      if (e.record.type !== 'add' || e.record.identity !== this.me || st.isVoid(e.id)) continue
      if (!best || e.lamport > best.lamport || (e.lamport === best.lamport && e.id > best.id)) best = { id: e.id, lamport: e.lamport }
    }
    return best?.id
  }

  /** Whether this account's effective removal took away the role `guest`. */
  private wasGuest(space: SpaceEngine): boolean {
    const log = space.replica.acl
    const removals = log.current().removals.get(this.me) ?? []
    return removals.some((r) => log.stateAt(r.prevIds).roleOf(this.me) === 'guest')
  }

  private async writeRow(row: SpaceRow) {
    await this.h.writeRow(row)
    await this.refreshGates()
  }

  /** Per-path writes, so two devices moving different fields of one row both keep theirs. */
  private async patchRow(spaceId: string, fields: Record<string, unknown>) {
    const ops: Op[] = []
    for (const [path, value] of Object.entries(fields)) {
      if (value === undefined) continue
      ops.push(value === null ? { op: 'unset', ds: TECH_DS.spaces, id: spaceId, path } : { op: 'set', ds: TECH_DS.spaces, id: spaceId, path, value: value as Json })
    }
    await this.account.tech.write(this.account.techObject, ops)
    await this.refreshGates()
  }
}

/** The fold's join requests, as the member records show them. */
function requestsOf(st: AclState): JoinRequestView[] {
  return st.requests().map((r) => ({
    recordId: r.recordId,
    identity: r.joiner,
    permission: r.role ?? 'none',
    status: r.status,
    ...(r.metadata ? { metadata: r.metadata } : {}),
  }))
}
