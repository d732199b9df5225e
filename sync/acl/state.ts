import { LIMITS } from '../core/limits.ts'
import { foldAcl, type FoldResult } from './fold.ts'
import { extendFold } from './fold-extend.ts'
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
  /** Never changed once built: a state extended by one record shares what that record left alone. */
  readonly keys: ReadonlyMap<string, ReadKeyInfo>
  /** The key writers seal under, or undefined when every key is tainted (or none exists). */
  readonly readKeyId: string | undefined
  /** The newest key, tainted or not: what a new rotation links as `prev`. */
  readonly latestKeyId: string | undefined
  /** Records the fold did not apply (void or without the right), sorted. */
  readonly skipped: readonly string[]
  private readonly skippedSet: ReadonlySet<string>
  /** Effective removals by removed identity, in identity order. */
  readonly removals: ReadonlyMap<string, readonly AclEntry[]>
  /** Valid records no valid record descends from (sorted). */
  readonly frontier: readonly string[]
  /** Ids the effective removals witnessed (see `AclLog.voids`). */
  readonly witnessed: ReadonlySet<string>
  /** The two accounts of a one-to-one space. */
  readonly pair: readonly [string, string] | undefined
  private readonly roleAtFold: FoldResult['roleAt']
  private readonly fold: FoldResult
  private readonly keyFacts: KeyFacts
  private book: SharingBook | undefined
  /** canWriteAt answers by cited head, then identity: asked once per applied change. */
  private readonly writersAt = new Map<string, Map<string, boolean>>()

  /**
   * `from`: the state `f` extends by one record (see `extendFold`): what the record did not
   * change is shared with it instead of derived again.
   */
  constructor(f: FoldResult, from?: { prev: AclState; added?: AclEntry }) {
    this.owner = f.owner
    this.roles = f.roles
    this.skipped = f.void
    this.frontier = f.frontier
    // eslint-disable-next-line @typescript-eslint/unbound-method -- roleAt is an arrow property of the fold
    this.roleAtFold = f.roleAt
    this.fold = f
    this.pair = f.pair
    const prev = from?.prev
    this.skippedSet = prev && prev.skipped === f.void ? prev.skippedSet : new Set(f.void)
    if (prev && prev.fold.removals === f.removals) {
      this.removals = prev.removals
      this.witnessed = prev.witnessed
    } else {
      // Sorted by identity, so a state built by extension and one folded whole iterate alike.
      this.removals = new Map([...f.removals].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      const witnessed = new Set<string>()
      for (const list of f.removals.values()) for (const e of list) if (e.record.type === 'remove') for (const w of e.record.witness ?? []) witnessed.add(w)
      this.witnessed = witnessed
    }
    const readable = (id: string) => canRead(f.roles.get(id))
    const added = from?.added
    this.keyFacts = (from && (added ? extendKeys(from.prev.keyFacts, added, f, from.prev.fold.roles, readable) : from.prev.keyFacts)) ?? deriveKeys(f.valid, readable)
    this.keys = this.keyFacts.keys
    this.latestKeyId = this.keyFacts.latest
    this.readKeyId = this.keyFacts.readKeyId
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
    return [...this.roles]
      .filter(([, r]) => canRead(r))
      .map(([id]) => id)
      .sort()
  }
  /**
   * Whether `identity` may write in the causal history of record `id`, counting only records
   * valid here: a member added by a record that this state voids (say, a removed admin's
   * backdated `add`) writes nothing, whatever the state it cites says.
   */
  canWriteAt(identity: string, id: string): boolean {
    let byId = this.writersAt.get(id)
    if (!byId) {
      byId = new Map()
      this.writersAt.set(id, byId)
    }
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
  /**
   * This state as the fold of its records but the requests `keep` rejects: a `join` or `cancel`
   * decides nothing but the accept naming it (fold rule 6), so only the requests, and what
   * precedes or roleAt say of them, differ. Undefined when a request left out is one whose
   * absence `harmless` denies (an accepted join): that needs a fold of its own.
   */
  withRequestsOnly(harmless: (id: string) => boolean, keep: (id: string) => boolean): AclState | undefined {
    const f = this.fold
    const out = new Set<string>()
    for (const e of f.requests) {
      if (keep(e.id)) continue
      if (!harmless(e.id)) return undefined
      out.add(e.id)
    }
    if (out.size === 0) return this
    const g: FoldResult = {
      ...f,
      requests: f.requests.filter((e) => !out.has(e.id)),
      precedes: (a, b) => !out.has(a) && !out.has(b) && f.precedes(a, b),
      roleAt: (identity, id) => (out.has(id) ? 'none' : f.roleAt(identity, id)),
    }
    return new AclState(g, { prev: this })
  }
  /** The fold this state was built from (what the next record's extension starts from). */
  get foldResult(): FoldResult {
    return this.fold
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

const isRequestRecord = (r: AclRecord) => r.type === 'join' || r.type === 'cancel'

/** The read keys of a state, in the order of the records introducing them, and which are tainted. */
interface KeyFacts {
  keys: ReadonlyMap<string, ReadKeyInfo>
  order: readonly string[]
  latest: string | undefined
  tainted: ReadonlySet<string>
  readKeyId: string | undefined
}

function keyInfoOf(rot: Rotation): ReadKeyInfo {
  return { wrapped: new Map(Object.entries(rot.keys)), prev: rot.prev, prevKeyId: rot.prevKeyId, others: rot.others ? new Map(Object.entries(rot.others)) : undefined }
}

function rotationOf(r: AclRecord): Rotation | undefined {
  return r.type === 'root' || r.type === 'remove' || r.type === 'rotate' ? r.rotation : undefined
}

/** Every key the valid records introduce, and the wraps later `add` records give. */
function deriveKeys(valid: readonly AclEntry[], readable: (id: string) => boolean): KeyFacts {
  const keys = new Map<string, ReadKeyInfo>()
  let latest: string | undefined
  const order: string[] = []
  for (const e of valid) {
    const r = e.record
    const rot = rotationOf(r)
    if (r.type === 'root' && r.pair) {
      keys.set(e.id, { wrapped: new Map(), pair: r.pair })
      order.push(e.id)
      latest = e.id
    } else if (rot) {
      keys.set(e.id, keyInfoOf(rot))
      order.push(e.id)
      latest = e.id
    } else if (r.type === 'add') keys.get(r.keyId)?.wrapped.set(r.identity, r.key)
  }
  return { keys, order, latest, ...taint(keys, order, readable) }
}

/**
 * Tainted: wrapped to someone who may not read, or linked (as `prev` or among `others`) from a
 * tainted key, whose holder opens the link: a rotation that did not know of a removal both
 * wraps its key to the removed member and links the removal's own key. The current key is the
 * newest untainted one.
 */
function taint(keys: ReadonlyMap<string, ReadKeyInfo>, order: readonly string[], readable: (id: string) => boolean): { tainted: Set<string>; readKeyId: string | undefined } {
  const tainted = new Set<string>()
  for (let i = order.length - 1; i >= 0; i--) {
    const info = keys.get(order[i])!
    if (!tainted.has(order[i]) && !wrapsToNonReader(info, readable)) continue
    const stack = [order[i]]
    while (stack.length) {
      const k = stack.pop()!
      if (tainted.has(k)) continue
      tainted.add(k)
      const ki = keys.get(k)
      if (!ki) continue
      if (ki.prevKeyId) stack.push(ki.prevKeyId)
      for (const o of ki.others?.keys() ?? []) stack.push(o)
    }
  }
  let readKeyId: string | undefined
  for (let i = order.length - 1; i >= 0 && readKeyId === undefined; i--) if (!tainted.has(order[i])) readKeyId = order[i]
  return { tainted, readKeyId }
}

function wrapsToNonReader(info: ReadKeyInfo, readable: (id: string) => boolean): boolean {
  for (const id of info.wrapped.keys()) if (!readable(id)) return true
  return false
}

/**
 * The key facts after one more record `e` (the last one, see `extendFold`), from the facts
 * before it; undefined where only a full derivation will do. Taint depends on who may read:
 * when `e` leaves that alone, only a new key can be tainted, and one wrapped to readers only
 * taints nothing; when it changes (a removal, a member added back), taint is worked out again
 * over the keys, which is still far less than deriving them from every record.
 */
function extendKeys(prev: KeyFacts, e: AclEntry, f: FoldResult, rolesBefore: ReadonlyMap<string, Role>, readable: (id: string) => boolean): KeyFacts | undefined {
  if (f.valid[f.valid.length - 1] !== e) return prev
  const r = e.record
  switch (r.type) {
    case 'merge':
      return prev
    case 'rotate':
    case 'remove': {
      const info = keyInfoOf(r.rotation)
      const keys = new Map(prev.keys).set(e.id, info)
      const order = [...prev.order, e.id]
      // A removal makes its member a non-reader: any key wrapped to it becomes tainted.
      if (r.type === 'remove' || wrapsToNonReader(info, readable)) return { keys, order, latest: e.id, ...taint(keys, order, readable) }
      return { keys, order, latest: e.id, tainted: prev.tainted, readKeyId: e.id }
    }
    case 'add':
    case 'role': {
      let keys = prev.keys
      const info = r.type === 'add' ? prev.keys.get(r.keyId) : undefined
      if (r.type === 'add' && info) {
        const copy = new Map(prev.keys)
        copy.set(r.keyId, { ...info, wrapped: new Map(info.wrapped).set(r.identity, r.key) })
        keys = copy
      }
      if (canRead(rolesBefore.get(r.identity)) === readable(r.identity)) return { ...prev, keys }
      return { keys, order: prev.order, latest: prev.latest, ...taint(keys, prev.order, readable) }
    }
    default:
      return undefined
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
  /** The highest lamport of any record. */
  private maxLamport = -1
  /** Some record's lamport is not above a parent's: only full folds from then on. */
  private backdated = false
  /** Identities some add, role or remove record is about. */
  private readonly subjects = new Set<string>()
  /** Join requests some `add` accepts: such a join decides its accept (fold rule 6). */
  private readonly accepted = new Set<string>()
  /** Merged states built by extending the previous one, and by a full fold (for tests and benches). */
  readonly foldStats = { extended: 0, full: 0 }

  constructor(
    readonly spaceId: string,
    /** False: every merged state is a full fold (the reference the incremental path is tested against). */
    private readonly incremental = true,
  ) {}

  has(id: string) {
    return this.entries.has(id)
  }

  add(e: AclEntry): void {
    if (this.entries.has(e.id)) return
    const prev = this.currentState
    const extendable = prev !== undefined && this.incremental && this.followsAll(e)
    this.entries.set(e.id, e)
    for (const p of e.prevIds) this.heads.delete(p)
    this.heads.add(e.id)
    this.maxLamport = Math.max(this.maxLamport, e.lamport)
    // The fold reads ancestry in (lamport, id) order: a record at or below a parent's lamport
    // (never admitted, but a fold takes any set) loses ancestors there, which extension assumes.
    if (e.prevIds.some((p) => (this.entries.get(p)?.lamport ?? -1) >= e.lamport)) this.backdated = true
    this.currentState = extendable ? this.extend(prev, e) : undefined
    const r = e.record
    if (r.type === 'add' || r.type === 'role' || r.type === 'remove') this.subjects.add(r.identity)
    if (r.type === 'add' && r.request !== undefined) this.accepted.add(r.request)
  }

  /**
   * `e` (not yet added) comes after every record the fold judges: its lamport is above all, and
   * its parents include every head but requests (`join`, `cancel`: no record need cite them).
   */
  private followsAll(e: AclEntry): boolean {
    if (this.backdated || e.lamport <= this.maxLamport || isRequestRecord(e.record)) return false
    for (const p of e.prevIds) if (!this.entries.has(p)) return false
    for (const h of this.heads) if (!e.prevIds.includes(h) && !isRequestRecord(this.entries.get(h)!.record)) return false
    return true
  }

  /** The merged state once `e` (just added, after everything: see followsAll) joined `prev`'s. */
  private extend(prev: AclState, e: AclEntry): AclState | undefined {
    const f = extendFold(prev.foldResult, e, {
      // Every known record but a request is in e's past; a request only if e descends from it.
      inPast: (id) => !isRequestRecord(this.entries.get(id)!.record) || this.requestInPast(id, e.prevIds),
      hadRecordsAbout: (identity) => this.subjects.has(identity),
    })
    if (!f) return undefined
    this.foldStats.extended++
    return new AclState(f, { prev, added: e })
  }

  /**
   * `ids` are heads, and every head but requests is among them: their past is the whole log but
   * the requests they do not descend from. Nothing cites a join (it is never valid), so once a
   * space has one this is what every record arriving in causal order cites.
   */
  private allButRequests(ids: readonly string[]): boolean {
    if (!this.incremental) return false
    for (const id of ids) if (!this.heads.has(id)) return false
    for (const h of this.heads) if (!ids.includes(h) && !isRequestRecord(this.entries.get(h)!.record)) return false
    return true
  }

  /** Request `id` is among `ids` or in their causal past. */
  private requestInPast(id: string, ids: readonly string[]): boolean {
    const stack = [...ids]
    const seen = new Set<string>()
    while (stack.length) {
      const x = stack.pop()!
      if (x === id) return true
      if (seen.has(x)) continue
      seen.add(x)
      const r = this.entries.get(x)
      // Requests hang off the root and each other only: nothing else leads back to one.
      if (r && isRequestRecord(r.record)) stack.push(...r.prevIds)
    }
    return false
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
      r.type === 'merge'
        ? st.canWrite(e.author)
        : r.type === 'profile'
          ? st.canRead(e.author) && st.keys.has(r.keyId)
          : r.type === 'invite' && r.permission === 'guest'
            ? e.author === st.owner
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
    const st =
      (this.allButRequests(ids) &&
        this.current().withRequestsOnly(
          (id) => this.requestInPast(id, ids) || !this.accepted.has(id),
          (id) => this.requestInPast(id, ids),
        )) ||
      new AclState(foldAcl(this.history(ids), this.spaceId))
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
    if (this.currentState) return this.currentState
    this.foldStats.full++
    return (this.currentState = new AclState(foldAcl(this.entries.values(), this.spaceId)))
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
