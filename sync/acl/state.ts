import { compareChanges } from '../dag/change.ts'
import { canManage, canRead, canWrite, type AclRecord, type Role, type Rotation } from './records.ts'

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
}

/**
 * The ACL as of some set of records: the fold, in (lamport, id) order, of every record in
 * their causal history. A record whose author lacks the right at its place in that fold is
 * skipped, so concurrent records resolve the same way on every peer.
 */
export class AclState {
  owner = ''
  readonly roles = new Map<string, Role>()
  readKeyId: string | undefined
  readonly keys = new Map<string, ReadKeyInfo>()
  /** Records the fold skipped (author lacked the right at that point). */
  readonly skipped: string[] = []

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

  apply(e: AclEntry): void {
    const r = e.record
    if (r.type === 'root') {
      if (this.owner !== '') return void this.skipped.push(e.id)
      this.owner = r.owner
      this.roles.set(r.owner, 'owner')
      if (r.rotation) this.addKey(e.id, r.rotation)
      return
    }
    if (!this.canManage(e.author)) return void this.skipped.push(e.id)
    switch (r.type) {
      case 'add': {
        if (r.identity === this.owner) return void this.skipped.push(e.id)
        this.roles.set(r.identity, r.role)
        this.keys.get(r.keyId)?.wrapped.set(r.identity, r.key)
        return
      }
      case 'role':
        if (r.identity === this.owner || !this.roles.has(r.identity)) return void this.skipped.push(e.id)
        if (r.role === 'admin' && this.roleOf(e.author) !== 'owner') return void this.skipped.push(e.id)
        this.roles.set(r.identity, r.role)
        return
      case 'remove':
        if (r.identity === this.owner) return void this.skipped.push(e.id)
        this.roles.set(r.identity, 'none')
        this.addKey(e.id, r.rotation)
        return
      case 'rotate':
        this.addKey(e.id, r.rotation)
        return
    }
  }

  private addKey(id: string, rot: Rotation) {
    this.keys.set(id, { wrapped: new Map(Object.entries(rot.keys)), prev: rot.prev, prevKeyId: rot.prevKeyId })
    this.readKeyId = id
  }
}

/** The ACL DAG of one space: accepted records, heads, and memoized states. */
export class AclLog {
  readonly entries = new Map<string, AclEntry>()
  readonly heads = new Set<string>()
  private readonly states = new Map<string, AclState>()
  private removals: Map<string, AclEntry[]> | undefined
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
    this.states.clear()
    this.removals = undefined
    this.currentState = undefined
  }

  headIds(): string[] {
    return [...this.heads].sort()
  }

  /** The newest head in the total order: what a local writer cites. */
  latestHead(): string {
    let best: AclEntry | undefined
    for (const h of this.heads) {
      const e = this.entries.get(h)!
      if (!best || compareChanges(e, best) > 0) best = e
    }
    return best?.id ?? ''
  }

  /** State after every record in the causal history of `ids` (inclusive). */
  stateAt(ids: readonly string[]): AclState {
    const key = ids.length === 1 ? ids[0] : [...ids].sort().join(',')
    return this.states.get(key) ?? this.computeState(key, ids)
  }

  /** stateAt([id]) without the array: asked once per applied change. */
  stateAtHead(id: string): AclState {
    return this.states.get(id) ?? this.computeState(id, [id])
  }

  private computeState(key: string, ids: readonly string[]): AclState {
    const st = new AclState()
    for (const e of this.history(ids)) st.apply(e)
    this.states.set(key, st)
    return st
  }

  current(): AclState {
    return (this.currentState ??= this.stateAt(this.headIds()))
  }

  /** Every record reachable from `ids`, in (lamport, id) order. */
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
    return out.sort(compareChanges)
  }

  /**
   * Removals of `identity` that took effect, for the void rule: a change by a removed member
   * whose ACL head does not include the removal, stamped after it, is kept in the DAG but its
   * ops never apply (see docs/architecture.md, "Removal and concurrent writes").
   */
  effectiveRemovalsOf(identity: string): readonly AclEntry[] {
    // Asked once per applied change: index the removals once per ACL version.
    if (!this.removals) {
      this.removals = new Map()
      const skipped = new Set(this.current().skipped)
      for (const e of this.entries.values()) {
        if (e.record.type !== 'remove' || skipped.has(e.id)) continue
        const list = this.removals.get(e.record.identity) ?? []
        list.push(e)
        this.removals.set(e.record.identity, list)
      }
    }
    return this.removals.get(identity) ?? []
  }

  /** True when a change by `author` citing `aclHeadId` at `timestamp` is voided by a removal. */
  voids(author: string, aclHeadId: string, timestamp: number): boolean {
    for (const r of this.effectiveRemovalsOf(author)) {
      if (r.timestamp < timestamp && !this.precedesOrEquals(r.id, aclHeadId)) return true
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
