import { LIMITS } from '../core/limits.ts'
import { foldAcl, type FoldResult } from './fold.ts'
import { canManage, canRead, canWrite, type AclRecord, type Role, type Rotation } from './records.ts'
import { verifyJoinProof } from './join-proof.ts'
import { sharingBook, type InviteInfo, type JoinRequest, type JoinStatus, type ProfileEntry, type SharingBook } from './requests.ts'

/** One accepted ACL record with the DAG facts the fold needs. */
export interface AclEntry {
  id: string
  lamport: number
  prevIds: string[]
  author: string
  timestamp: number
  record: AclRecord
}

export interface ReadKeyInfo {
  /** The key wrapped to identities, from the rotation and from later `add` records. */
  wrapped: Map<string, Uint8Array>
  prev?: Uint8Array
  prevKeyId?: string
  /** Other older keys sealed under this one (concurrent branches joined by this rotation). */
  others?: Map<string, Uint8Array>
  /** A one-to-one space's first key: not wrapped but agreed by these two accounts (acl/pair.ts). */
  pair?: readonly [string, string]
}

/**
 * The ACL as of a causally closed set of records: the fold (fold.ts) decides which records
 * take effect; this holds the roles and read keys they leave.
 *
 * Read keys: every effective rotation introduces a key. A key wrapped to an identity whose role
 * here is `none` is tainted (after concurrent rotations, one admin may have wrapped its key to
 * a member the other removed). The current read key is the newest untainted key, in (lamport,
 * id) order of the records introducing them; with none, nobody may write until a manager
 * rotates (see `needsRotation`).
 */
export class AclState {
  readonly owner: string
  readonly roles: ReadonlyMap<string, Role>
  readonly keys = new Map<string, ReadKeyInfo>()
  /** The key writers seal under, or undefined when every key is tainted (or none exists). */
  readonly readKeyId: string | undefined
  /** The newest key, tainted or not: what a new rotation links as `prev`. */
  readonly latestKeyId: string | undefined
  /** Records the fold did not apply (void or without the right), sorted. */
  readonly skipped: readonly string[]
  private readonly skippedSet: ReadonlySet<string>
  /** Effective removals by removed identity. */
  readonly removals: ReadonlyMap<string, readonly AclEntry[]>
  /** Valid records no valid record descends from (sorted). */
  readonly frontier: readonly string[]
  /** Ids the effective removals witnessed (see `AclLog.voids`). */
  readonly witnessed: ReadonlySet<string>
  /** The two accounts of a one-to-one space. */
  readonly pair: readonly [string, string] | undefined
  private readonly roleAtFold: FoldResult['roleAt']
  private readonly fold: FoldResult
  private book: SharingBook | undefined
  /** canWriteAt answers by cited head, then identity: asked once per applied change. */
  private readonly writersAt = new Map<string, Map<string, boolean>>()

  constructor(f: FoldResult) {
    this.owner = f.owner
    this.roles = f.roles
    this.skipped = f.void
    this.skippedSet = new Set(f.void)
    this.removals = f.removals
    this.frontier = f.frontier
    this.roleAtFold = f.roleAt
    this.fold = f
    this.pair = f.pair
    const witnessed = new Set<string>()
    for (const list of f.removals.values()) for (const e of list) if (e.record.type === 'remove') for (const w of e.record.witness ?? []) witnessed.add(w)
    this.witnessed = witnessed
    let latest: string | undefined
    const order: string[] = []
    for (const e of f.valid) {
      const r = e.record
      const rot: Rotation | undefined = r.type === 'root' || r.type === 'remove' || r.type === 'rotate' ? r.rotation : undefined
      if (r.type === 'root' && r.pair) {
        this.keys.set(e.id, { wrapped: new Map(), pair: r.pair })
        order.push(e.id)
        latest = e.id
      } else if (rot) {
        this.keys.set(e.id, {
          wrapped: new Map(Object.entries(rot.keys)), prev: rot.prev, prevKeyId: rot.prevKeyId,
          others: rot.others ? new Map(Object.entries(rot.others)) : undefined,
        })
        order.push(e.id)
        latest = e.id
      } else if (r.type === 'add') this.keys.get(r.keyId)?.wrapped.set(r.identity, r.key)
    }
    this.latestKeyId = latest
    // Tainted: wrapped to someone who may not read, or linked (as `prev` or among `others`) from
    // a tainted key, whose holder opens the link: a rotation that did not know of a removal both
    // wraps its key to the removed member and links the removal's own key.
    const tainted = new Set<string>()
    for (let i = order.length - 1; i >= 0; i--) {
      const info = this.keys.get(order[i])!
      if (!tainted.has(order[i]) && ![...info.wrapped.keys()].some((id) => !this.canRead(id))) continue
      const stack = [order[i]]
      while (stack.length) {
        const k = stack.pop()!
        if (tainted.has(k)) continue
        tainted.add(k)
        const ki = this.keys.get(k)
        if (!ki) continue
        if (ki.prevKeyId) stack.push(ki.prevKeyId)
        for (const o of ki.others?.keys() ?? []) stack.push(o)
      }
    }
    let current: string | undefined
    for (let i = order.length - 1; i >= 0 && current === undefined; i--) if (!tainted.has(order[i])) current = order[i]
    this.readKeyId = current
  }

  roleOf(identity: string): Role {
    return this.roles.get(identity) ?? 'none'
  }
  canWrite(identity: string) {
    return canWrite(this.roles.get(identity))
  }
  canManage(identity: string) {
    return canManage(this.roles.get(identity))
  }
  canRead(identity: string) {
    return canRead(this.roles.get(identity))
  }
  /** Members who keep read access: every role but none. */
  readers(): string[] {
    return [...this.roles].filter(([, r]) => canRead(r)).map(([id]) => id).sort()
  }
  /**
   * Whether `identity` may write in the causal history of record `id`, counting only records
   * valid here: a member added by a record that this state voids (say, a removed admin's
   * backdated `add`) writes nothing, whatever the state it cites says.
   */
  canWriteAt(identity: string, id: string): boolean {
    let byId = this.writersAt.get(id)
    if (!byId) this.writersAt.set(id, (byId = new Map()))
    let ok = byId.get(identity)
    if (ok === undefined) byId.set(identity, (ok = canWrite(this.roleAtFold(identity, id))))
    return ok
  }
  /** The fold did not apply this record. */
  isVoid(id: string): boolean {
    return this.skippedSet.has(id)
  }
  /**
   * A manager should rotate: the space has keys, but none is untainted, or a reader holds no
   * wrap of the current one (added with an older key concurrently with a rotation).
   */
  needsRotation(): boolean {
    if (this.keys.size === 0 || this.pair) return false
    if (this.readKeyId === undefined) return true
    const wrapped = this.keys.get(this.readKeyId)!.wrapped
    return this.readers().some((id) => !wrapped.has(id))
  }
  /**
   * Whether `identity` can reach key `keyId` from what the ACL says: a wrap of it, or a link into
   * it (`prev`, `others`) from a key it reaches. Every peer answers alike, without any key.
   */
  reaches(identity: string, keyId: string): boolean {
    const seen = new Set<string>()
    const stack = [...this.keys].filter(([, info]) => info.wrapped.has(identity) || info.pair?.includes(identity)).map(([id]) => id)
    while (stack.length) {
      const k = stack.pop()!
      if (k === keyId) return true
      if (seen.has(k)) continue
      seen.add(k)
      const info = this.keys.get(k)
      if (!info) continue
      if (info.prevKeyId) stack.push(info.prevKeyId)
      for (const o of info.others?.keys() ?? []) stack.push(o)
    }
    return false
  }
  /** Live invites (valid, not revoked or replaced), in (lamport, id) order. */
  invites(): InviteInfo[] {
    return this.sharing().invites
  }
  /** Every join request with its status, in (lamport, id) order of the `join` records. */
  requests(): JoinRequest[] {
    return this.sharing().requests
  }
  /** Each member's newest valid profile record, by identity (sealed under its `keyId`). */
  profiles(): ReadonlyMap<string, ProfileEntry> {
    return this.sharing().profiles
  }
  /**
   * Where `joiner`'s join stands: a pending request if it has one, else its newest by the
   * timestamp it stamped itself (only its own requests compete); undefined when it has none.
   */
  joinStatus(joiner: string): JoinStatus | undefined {
    let best: JoinRequest | undefined
    let bestAt = -1
    for (const q of this.requests()) {
      if (q.joiner !== joiner) continue
      if (q.status === 'pending') return 'pending'
      const at = this.fold.requests.find((e) => e.id === q.recordId)!.timestamp
      if (at > bestAt || (at === bestAt && best && q.recordId > best.recordId)) {
        best = q
        bestAt = at
      }
    }
    return best?.status
  }
  /** Where one join request (by its `join` record id) stands. */
  requestStatus(requestId: string): JoinStatus | undefined {
    return this.requests().find((q) => q.recordId === requestId)?.status
  }
  /** Record `a` is `b` or in its causal past. */
  precedes(a: string, b: string): boolean {
    return this.fold.precedes(a, b)
  }
  private sharing(): SharingBook {
    return (this.book ??= sharingBook(this.fold))
  }
  /** Keys no other key links to: a new rotation links all of them, so history stays reachable. */
  keyHeads(): string[] {
    const linked = new Set<string>()
    for (const info of this.keys.values()) {
      if (info.prevKeyId) linked.add(info.prevKeyId)
      for (const k of info.others?.keys() ?? []) linked.add(k)
    }
    return [...this.keys.keys()].filter((k) => !linked.has(k)).sort()
  }
}

/** What a local writer cites: the one valid head, or the records a `merge` must join first. */
export type Citation = { head: string } | { merge: string[] }

/** Why the ACL refuses a record before it joins the DAG (the replica's reject reasons). */
export type AclRefusal = 'not_member' | 'read_only' | 'malformed' | 'bad_lamport'

/** The ACL DAG of one space: accepted records, heads, and the fold's states. */
export class AclLog {
  readonly entries = new Map<string, AclEntry>()
  readonly heads = new Set<string>()
  /** States at fixed sets of records: immutable once computed, so only the count is bounded. */
  private readonly states = new Map<string, AclState>()
  private currentState: AclState | undefined

  constructor(readonly spaceId: string) {}

  has(id: string) {
    return this.entries.has(id)
  }

  add(e: AclEntry): void {
    if (this.entries.has(e.id)) return
    this.entries.set(e.id, e)
    for (const p of e.prevIds) this.heads.delete(p)
    this.heads.add(e.id)
    this.currentState = undefined
  }

  headIds(): string[] {
    return [...this.heads].sort()
  }

  /**
   * Whether a record may join the DAG, judged only by its causal past (so every peer decides
   * alike): its author may act at the state of its prevIds (manage; write for `merge`), a
   * `merge` joins at least two records, a rotation links only keys of that state, and its
   * lamport is above every parent's. Whether it then takes effect is the fold's business.
   */
  admissible(e: AclEntry): AclRefusal | undefined {
    const r = e.record
    if (r.type === 'root') return 'malformed'
    if (e.prevIds.length === 0 || e.prevIds.some((p) => !this.entries.has(p))) return 'malformed'
    if (r.type === 'merge' && e.prevIds.length < 2) return 'malformed'
    if (r.type === 'join' || r.type === 'cancel') return this.admissibleRequest(e)
    const st = this.stateAt(e.prevIds)
    // A one-to-one space has no managers: its members write, merge and publish profiles only.
    if (st.pair && r.type !== 'merge' && r.type !== 'profile') return st.canRead(e.author) ? 'read_only' : 'not_member'
    const allowed =
      r.type === 'merge' ? st.canWrite(e.author)
      : r.type === 'profile' ? st.canRead(e.author) && st.keys.has(r.keyId)
      : r.type === 'invite' && r.permission === 'guest' ? e.author === st.owner
      : st.canManage(e.author)
    if (!allowed) return st.roleOf(e.author) === 'none' ? 'not_member' : 'read_only'
    const rot = 'rotation' in r ? r.rotation : undefined
    if (rot) {
      if (rot.prevKeyId !== undefined && !st.keys.has(rot.prevKeyId)) return 'malformed'
      for (const k of Object.keys(rot.others ?? {})) if (!st.keys.has(k)) return 'malformed'
    }
    let maxPrev = 0
    for (const p of e.prevIds) maxPrev = Math.max(maxPrev, this.entries.get(p)!.lamport)
    if (e.lamport <= maxPrev) return 'bad_lamport'
    return undefined
  }

  /**
   * A `join` or `cancel`, by an account that need not be a member: it needs no right and gets
   * none, so what admits it is only what every peer can check alike once its dependencies are
   * here (the replica parks a join until its invite arrives: `aclRecordDep`). A join cites the
   * root alone (its author knows no other head) and its proof verifies against the key of the
   * `invite` record it names; a cancel builds on the one join it withdraws and has the same
   * author. Whether the invite is still live is for the join entry and the request's status
   * (requests.ts), not admission.
   */
  private admissibleRequest(e: AclEntry): AclRefusal | undefined {
    const r = e.record
    if (e.prevIds.length !== 1) return 'malformed'
    const parent = this.entries.get(e.prevIds[0])!
    if (e.lamport !== parent.lamport + 1) return 'bad_lamport'
    if (r.type === 'join') {
      if (parent.id !== this.spaceId) return 'malformed'
      const inv = this.entries.get(r.invite)?.record
      if (inv?.type !== 'invite') return 'malformed'
      if (!verifyJoinProof(inv.key, r.proof, this.spaceId, e.author, r.invite)) return 'not_member'
      return undefined
    }
    if (r.type !== 'cancel' || parent.id !== r.request || parent.record.type !== 'join') return 'malformed'
    return parent.author === e.author ? undefined : 'not_member'
  }

  /** State after every record in the causal history of `ids` (inclusive). */
  stateAt(ids: readonly string[]): AclState {
    const key = ids.length === 1 ? ids[0] : [...ids].sort().join(',')
    const hit = this.states.get(key)
    if (hit) return hit
    // Records arriving in causal order cite every head: their past is the whole log.
    if (ids.length === this.heads.size && ids.every((id) => this.heads.has(id))) return this.current()
    const st = new AclState(foldAcl(this.history(ids), this.spaceId))
    // A set with an unknown id gets a larger history once it arrives: not cached.
    if (ids.every((id) => this.entries.has(id))) {
      if (this.states.size >= LIMITS.aclStateCache) this.states.delete(this.states.keys().next().value!)
      this.states.set(key, st)
    }
    return st
  }

  /** stateAt([id]) without the array: asked once per applied change. */
  stateAtHead(id: string): AclState {
    return this.states.get(id) ?? this.stateAt([id])
  }

  /** The merged state of every known record. */
  current(): AclState {
    return (this.currentState ??= new AclState(foldAcl(this.entries.values(), this.spaceId)))
  }

  /**
   * What a local writer cites: the merged state's single valid frontier record when there is
   * one (it then has every valid record in its history, so its state is the merged state), else
   * the frontier a `merge` record must join first. A record the fold skipped is never cited.
   */
  citation(): Citation {
    const f = this.current().frontier
    return f.length === 1 ? { head: f[0] } : { merge: [...f] }
  }

  /** Every record reachable from `ids`. */
  history(ids: readonly string[]): AclEntry[] {
    const seen = new Set<string>()
    const stack = [...ids]
    const out: AclEntry[] = []
    while (stack.length) {
      const id = stack.pop()!
      if (seen.has(id)) continue
      seen.add(id)
      const e = this.entries.get(id)
      if (!e) continue
      out.push(e)
      stack.push(...e.prevIds)
    }
    return out
  }

  /** Removals of `identity` that take effect in the merged state, in (lamport, id) order. */
  effectiveRemovalsOf(identity: string): readonly AclEntry[] {
    return this.current().removals.get(identity) ?? []
  }

  /**
   * Removal wins, for object changes and roots: a change by `author` citing `aclHeadId` is void
   * when the author cannot write at that head counting only records valid in the merged state,
   * or when an effective removal of the author is not in that head's causal past and did not
   * witness the change (`covered(witness)`: the change is an ancestor-or-equal, in its own tree,
   * of one of those ids). No clock or counter the author picks enters into it. A derived root
   * (no author) is never void.
   */
  voids(author: string, aclHeadId: string, covered: (witness: readonly string[]) => boolean): boolean {
    return this.voidsIn(this.current(), author, aclHeadId, covered)
  }

  /** `voids` as judged by the merged state `st` (an earlier `current()`, to see what changed). */
  voidsIn(st: AclState, author: string, aclHeadId: string, covered: (witness: readonly string[]) => boolean): boolean {
    if (author === '') return false
    if (!st.canWriteAt(author, aclHeadId)) return true
    for (const r of st.removals.get(author) ?? []) {
      if (this.precedesOrEquals(r.id, aclHeadId)) continue
      if (r.record.type === 'remove' && covered(r.record.witness ?? [])) continue
      return true
    }
    return false
  }

  /** True when `a` is `b` or one of its ancestors. */
  precedesOrEquals(a: string, b: string): boolean {
    if (a === b) return true
    const target = this.entries.get(a)
    if (!target) return false
    const seen = new Set<string>()
    const stack = [b]
    while (stack.length) {
      const id = stack.pop()!
      if (id === a) return true
      if (seen.has(id)) continue
      seen.add(id)
      const e = this.entries.get(id)
      if (!e || e.lamport <= target.lamport) continue
      stack.push(...e.prevIds)
    }
    return false
  }
}
