import { compareChanges } from '../dag/change.ts'
import { canManage, canRead, canWrite, type AclRecord, type Role } from './records.ts'
import type { AclEntry } from './state.ts'

/**
 * The ACL fold: which records of a causally closed set take effect, and the roles and keys
 * they leave. Pure and order-free: the same set gives the same result on every peer, whatever
 * order its records arrived in. The rules (docs/acl.md):
 *
 * 1. Rights come from the causal past. A record by a non-owner counts only if its author held
 *    the right in the record's causal past, counting only records valid in this fold (so a
 *    right granted by a void record is none); a member removed there is `none` unless re-added
 *    after the removal. Concurrent records never lend each other rights.
 * 2. Removal wins. A record by X concurrent with an effective removal of X (neither in the
 *    other's causal past) is void; so are `add`/`role` records about X concurrent with it, and
 *    ACL records needing the manage right concurrent with an owner's `add`/`role` record giving
 *    X a role other than admin (a demotion, when X was one).
 * 3. Power order. Owner above admins; admins by the (lamport, id) position of the owner record
 *    granting them admin (the latest such grant in the record's causal past): earlier is senior.
 *    Removals by admins are decided in that order: one whose author was removed, concurrently,
 *    by a removal already decided effective (so of at least its power) is void. A removal that
 *    is effective by this order but whose author lacks the right at its place (rule 1) is
 *    dropped and the order is run again without it, so it is effective only if both hold.
 * 4. Grants. Only the owner grants admin (by `add` or `role`) or changes an admin's role; an
 *    admin removes an admin only by `remove`. Concurrent grants to one member: the most
 *    powerful author wins, then the later (lamport, id).
 * 5. Sharing records. `invite`, `uninvite` and `decline` need the manage right (a guest
 *    `invite` the owner); `profile` the read right. `join` and `cancel`, by accounts that need
 *    not be members, are neither valid nor void: they confer and need no right, and are never
 *    cited; `requests.ts` reads them. In a one-to-one space (a `pair` root) both accounts are
 *    writers and only `merge` and `profile` records can be valid: nobody adds, removes or rotates.
 * 6. Revocation wins for guests. An `add` accepting a join through a guest invite (its `request`)
 *    is void unless every owner `uninvite` of that invite descends from it: a manager device that
 *    auto-accepted a guest concurrently with the owner revoking the guest key admits nobody, so
 *    no later rotation wraps a key to that guest. (A guest the owner knew of when revoking is
 *    removed by the owner's own `remove`.)
 */
export interface FoldResult {
  owner: string
  roles: Map<string, Role>
  /** Records that take effect, in (lamport, id) order. */
  valid: AclEntry[]
  /** Ids of records that do not (void or skipped), sorted. */
  void: string[]
  /** Effective removals by removed identity, in (lamport, id) order. */
  removals: Map<string, AclEntry[]>
  /** Valid records no other valid record descends from: what a writer's citation must cover. */
  frontier: string[]
  /** `join` and `cancel` records (no right needed, none conferred), in (lamport, id) order. */
  requests: AclEntry[]
  /** The two accounts of a one-to-one space, from its root. */
  pair?: readonly [string, string]
  /** Record `a` is `b` or in its causal past. */
  precedes(a: string, b: string): boolean
  /**
   * A member's role in the causal history of record `id` (inclusive), counting only records
   * valid in this fold: a right granted by a record this fold voids is no right.
   */
  roleAt(identity: string, id: string): Role
}

type Right = 'manage' | 'write' | 'read'

/**
 * Records that change membership or keys: the ones whose ancestry the fold asks about. Merges
 * (which any writer may sign) and the sharing bookkeeping (invites, requests, profiles) are left
 * out, so their number does not widen the bitsets.
 */
const tracked = (r: AclRecord) => r.type === 'root' || r.type === 'add' || r.type === 'role' || r.type === 'remove' || r.type === 'rotate'
const isRequest = (r: AclRecord) => r.type === 'join' || r.type === 'cancel'
const rightFor = (r: AclRecord): Right => (r.type === 'merge' ? 'write' : r.type === 'profile' ? 'read' : 'manage')
const holds = (need: Right, role: Role) => (need === 'write' ? canWrite(role) : need === 'read' ? canRead(role) : canManage(role))
const subjectOf = (r: AclRecord): string | undefined => (r.type === 'add' || r.type === 'role' || r.type === 'remove' ? r.identity : r.type === 'root' ? r.owner : undefined)

export function foldAcl(input: Iterable<AclEntry>, spaceId: string): FoldResult {
  return new Fold([...input].sort(compareChanges), spaceId).run()
}

class Fold {
  private readonly n: number
  private readonly pos = new Map<string, number>()
  /** Tracked-record bit of each tracked entry (-1 for merges). */
  private readonly bit: Int32Array
  /** Per entry: the tracked records in its causal past, itself included, as a bitset. */
  private readonly anc: Uint32Array[]
  private readonly words: number
  /** Per demotion: every entry in its causal past (lazily, by position). */
  private readonly fullAnc = new Map<number, Uint8Array>()
  private readonly about = new Map<string, number[]>()
  private readonly grants = new Map<string, number[]>()
  /** Per join id, the guest invite it cites; per guest invite id, the owner's uninvites of it. */
  private readonly guestJoins = new Map<string, string>()
  private readonly guestRevocations = new Map<string, number[]>()
  private owner = ''
  private rootPos = -1
  private pair: [string, string] | undefined

  constructor(
    private readonly es: AclEntry[],
    private readonly spaceId: string,
  ) {
    this.n = es.length
    es.forEach((e, i) => this.pos.set(e.id, i))
    this.bit = new Int32Array(this.n).fill(-1)
    let m = 0
    for (let i = 0; i < this.n; i++) if (tracked(es[i].record)) this.bit[i] = m++
    this.words = (m + 31) >>> 5
    this.anc = new Array<Uint32Array>(this.n)
    const all = new Uint32Array(this.n * this.words)
    // (lamport, id) order is a linear extension of the DAG: ingest refuses a lamport not above
    // every parent's, so parents come first.
    for (let i = 0; i < this.n; i++) {
      const a = all.subarray(i * this.words, (i + 1) * this.words)
      for (const p of es[i].prevIds) {
        const j = this.pos.get(p)
        if (j === undefined || j >= i) continue
        const pa = this.anc[j]
        for (let w = 0; w < this.words; w++) a[w] |= pa[w]
      }
      const b = this.bit[i]
      if (b >= 0) a[b >>> 5] |= 1 << (b & 31)
      this.anc[i] = a
    }
    for (let i = 0; i < this.n; i++) {
      const r = es[i].record
      if (r.type === 'root' && this.rootPos < 0 && (es[i].id === spaceId || spaceId === '')) {
        this.rootPos = i
        this.owner = r.owner
        this.pair = r.pair
      }
    }
    for (let i = 0; i < this.n; i++) {
      const e = es[i]
      const subject = subjectOf(e.record)
      if (subject === undefined || (e.record.type === 'root' && i !== this.rootPos)) continue
      push(this.about, subject, i)
      const r = e.record
      if (e.author === this.owner && (r.type === 'add' || r.type === 'role') && r.role === 'admin') push(this.grants, r.identity, i)
    }
    this.indexGuestInvites()
  }

  private indexGuestInvites() {
    const guestInvites = new Set<string>()
    for (const e of this.es) if (e.record.type === 'invite' && e.record.permission === 'guest') guestInvites.add(e.id)
    if (guestInvites.size === 0) return
    for (let i = 0; i < this.n; i++) {
      const { author, record: r, id } = this.es[i]
      if (r.type === 'join' && guestInvites.has(r.invite)) this.guestJoins.set(id, r.invite)
      if (r.type === 'uninvite' && author === this.owner && this.rootPos >= 0 && this.before(this.rootPos, i)) {
        for (const inv of r.invites) if (guestInvites.has(inv)) push(this.guestRevocations, inv, i)
      }
    }
  }

  /** Rule 6: an accept of a guest join that an owner revocation of its key did not see. */
  private revokedGuestAccept(i: number): boolean {
    const r = this.es[i].record
    if (r.type !== 'add' || r.request === undefined) return false
    const invite = this.guestJoins.get(r.request)
    if (invite === undefined) return false
    return (this.guestRevocations.get(invite) ?? []).some((u) => !this.before(i, u))
  }

  /** Tracked entry `t` is `i` or in its causal past. */
  private before(t: number, i: number): boolean {
    const b = this.bit[t]
    return b >= 0 && (this.anc[i][b >>> 5] & (1 << (b & 31))) !== 0
  }

  private pastOf(d: number): Uint8Array {
    let past = this.fullAnc.get(d)
    if (past) return past
    past = new Uint8Array(this.n)
    const stack = [...this.es[d].prevIds]
    while (stack.length) {
      const j = this.pos.get(stack.pop()!)
      if (j === undefined || past[j]) continue
      past[j] = 1
      stack.push(...this.es[j].prevIds)
    }
    this.fullAnc.set(d, past)
    return past
  }

  /** Neither is in the other's causal past. `d` must be tracked. */
  private concurrent(d: number, i: number): boolean {
    if (d === i || this.before(d, i)) return false
    // A tracked record's ancestry is in the bitsets; only a merge needs the walk.
    return this.bit[i] >= 0 ? !this.before(i, d) : !this.pastOf(d)[i]
  }

  /**
   * Power rank of entry `i`'s author at `i`: -1 for the owner, else the position of the latest
   * owner grant of admin in its causal past (lower is senior); Infinity without one.
   */
  private power(i: number): number {
    const author = this.es[i].author
    if (author === this.owner) return -1
    let best = -1
    for (const g of this.grants.get(author) ?? []) if (g < i && this.before(g, i) && g > best) best = g
    return best < 0 ? Infinity : best
  }

  run(): FoldResult {
    const dropped = new Set<number>()
    for (;;) {
      const demoted = this.decideRemovals(dropped)
      const res = this.judge(demoted, dropped)
      if (res.drop === undefined) return this.result(res.valid, demoted.removals)
      dropped.add(res.drop)
    }
  }

  /** Rule 3: owner demotions and removals first, then admins' removals by power. */
  private decideRemovals(dropped: Set<number>) {
    const manage = new Map<string, number[]>()
    const removals = new Map<string, number[]>()
    const candidates: Array<{ i: number; power: number }> = []
    for (let i = 0; i < this.n; i++) {
      const e = this.es[i]
      const r = e.record
      if (r.type === 'remove') {
        if (r.identity === this.owner) continue
        if (e.author === this.owner) {
          push(removals, r.identity, i)
          push(manage, r.identity, i)
        } else if (!dropped.has(i)) candidates.push({ i, power: this.power(i) })
      } else if ((r.type === 'role' || r.type === 'add') && e.author === this.owner && r.role !== 'admin' && r.identity !== this.owner) {
        // An owner's grant of anything but admin takes the manage right if there was one.
        push(manage, r.identity, i)
      }
    }
    candidates.sort((a, b) => a.power - b.power || a.i - b.i)
    for (const { i, power } of candidates) {
      if (power === Infinity) continue
      const e = this.es[i]
      if ((manage.get(e.author) ?? []).some((d) => this.concurrent(d, i))) continue
      const target = (e.record as { identity: string }).identity
      push(removals, target, i)
      push(manage, target, i)
    }
    return { manage, removals }
  }

  /** Rules 1, 2 and 4, in (lamport, id) order; reports the first removal rule 1 drops. */
  private judge(demoted: { manage: Map<string, number[]>; removals: Map<string, number[]> }, dropped: Set<number>) {
    const valid = new Uint8Array(this.n)
    const effective = new Set<number>()
    for (const list of demoted.removals.values()) for (const d of list) effective.add(d)
    const concurrentWith = (list: number[] | undefined, i: number) => !!list && list.some((d) => this.concurrent(d, i))
    for (let i = 0; i < this.n; i++) {
      const e = this.es[i]
      const r = e.record
      if (r.type === 'root') {
        valid[i] = i === this.rootPos ? 1 : 0
        continue
      }
      if (this.rootPos < 0 || !this.before(this.rootPos, i) || isRequest(r)) continue
      if (this.pair && r.type !== 'merge' && r.type !== 'profile') continue
      const isOwner = e.author === this.owner
      const role = isOwner ? 'owner' : this.roleAt(e.author, i, valid)
      const need = rightFor(r)
      if (!holds(need, role)) {
        if (r.type === 'remove' && effective.has(i)) return { valid, drop: i }
        continue
      }
      if (!isOwner) {
        if (r.type !== 'remove' && concurrentWith(demoted.removals.get(e.author), i)) continue
        if (need === 'manage' && r.type !== 'remove' && concurrentWith(demoted.manage.get(e.author), i)) continue
      }
      switch (r.type) {
        case 'merge':
        case 'rotate':
        case 'uninvite':
        case 'decline':
        case 'profile':
          valid[i] = 1
          break
        case 'invite':
          if (r.permission !== 'guest' || isOwner) valid[i] = 1
          break
        case 'remove':
          if (r.identity !== this.owner && (isOwner || effective.has(i)) && !dropped.has(i)) valid[i] = 1
          break
        case 'add':
        case 'role': {
          if (r.identity === this.owner) break
          if (r.role === 'admin' && !isOwner) break
          const current = this.roleAt(r.identity, i, valid)
          if (!isOwner && current === 'admin') break
          if (r.type === 'role' && current === 'none') break
          // Re-adding a removed member must causally follow the removal.
          if (concurrentWith(demoted.removals.get(r.identity), i)) break
          if (this.revokedGuestAccept(i)) break
          valid[i] = 1
          break
        }
      }
    }
    return { valid, drop: undefined }
  }

  /** A member's role in the fold of entry `i`'s causal past, `i` included only if `inclusive`. */
  private roleAt(identity: string, i: number, valid: Uint8Array, inclusive = false): Role {
    if (this.pair) return this.pair.includes(identity) ? 'writer' : 'none'
    if (identity === this.owner && this.rootPos >= 0) return 'owner'
    const list = this.about.get(identity)
    if (!list) return 'none'
    const live: number[] = []
    for (const x of list) {
      if (x > i || (x === i && !inclusive)) break
      if (valid[x] && this.before(x, i)) live.push(x)
    }
    return this.resolve(live)
  }

  /** Concurrent latest records about one member: a removal wins, else the most powerful. */
  private resolve(records: number[]): Role {
    let best = -1
    let bestPower = Infinity
    for (const x of records) {
      if (records.some((y) => y !== x && this.before(x, y))) continue
      const r = this.es[x].record
      if (r.type === 'remove') return 'none'
      const p = this.power(x)
      if (best < 0 || p < bestPower || (p === bestPower && x > best)) {
        best = x
        bestPower = p
      }
    }
    if (best < 0) return 'none'
    const r = this.es[best].record
    return r.type === 'add' || r.type === 'role' ? r.role : 'none'
  }

  private result(valid: Uint8Array, removals: Map<string, number[]>): FoldResult {
    const roles = new Map<string, Role>()
    if (this.pair) for (const id of this.pair) roles.set(id, 'writer')
    else if (this.rootPos >= 0) roles.set(this.owner, 'owner')
    for (const [identity, list] of this.about) {
      if (identity === this.owner || this.pair) continue
      const role = this.resolve(list.filter((x) => valid[x]))
      if (role !== 'none' || list.some((x) => valid[x])) roles.set(identity, role)
    }
    const roleAt = (identity: string, id: string): Role => {
      const i = this.pos.get(id)
      return i === undefined ? 'none' : this.roleAt(identity, i, valid, true)
    }
    const precedes = (a: string, b: string): boolean => {
      const i = this.pos.get(a)
      const j = this.pos.get(b)
      if (i === undefined || j === undefined || i > j) return false
      return i === j || (this.bit[i] >= 0 ? this.before(i, j) : !!this.pastOf(j)[i])
    }
    const out: FoldResult = { owner: this.owner, roles, valid: [], void: [], removals: new Map(), frontier: [], roleAt, requests: [], precedes }
    if (this.pair) out.pair = this.pair
    for (let i = 0; i < this.n; i++) {
      const e = this.es[i]
      if (valid[i]) out.valid.push(e)
      else if (isRequest(e.record) && this.rootPos >= 0 && this.before(this.rootPos, i)) out.requests.push(e)
      else out.void.push(e.id)
    }
    out.void.sort()
    for (const [identity, list] of removals) {
      const kept = list.filter((d) => valid[d]).sort((a, b) => a - b)
      if (kept.length)
        out.removals.set(
          identity,
          kept.map((d) => this.es[d]),
        )
    }
    // A record with a valid descendant is not on the frontier.
    const covered = new Uint8Array(this.n)
    for (let i = this.n - 1; i >= 0; i--) {
      if (!valid[i] && !covered[i]) continue
      for (const p of this.es[i].prevIds) {
        const j = this.pos.get(p)
        if (j !== undefined) covered[j] = 1
      }
    }
    for (let i = 0; i < this.n; i++) if (valid[i] && !covered[i]) out.frontier.push(this.es[i].id)
    out.frontier.sort()
    return out
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V) {
  const l = m.get(k)
  if (l) l.push(v)
  else m.set(k, [v])
}
