import { SvcError } from '../core/errors.ts'
import { LIMITS } from '../core/limits.ts'
import { seal } from '../crypto/box.ts'
import { publicKeyOf } from '../crypto/keys.ts'
import { wrapKeyTo } from '../crypto/wrap.ts'
import { signChange, type Change } from '../dag/change.ts'
import { encodeAclRecord, type AclRecord, type Role, type Rotation } from '../acl/records.ts'
import { removalWitness } from './acl-rules.ts'
import type { ReplicaState } from './replica-state.ts'

/**
 * Signs this replica's own ACL records. Each method runs inside the replica's serial queue
 * (the facade queues it) and hands the signed record to `commit`, which applies it through
 * the same path as a peer's and throws when it is refused.
 */
export class AclWriter {
  constructor(
    private readonly s: ReplicaState,
    private readonly commit: (c: Change) => Promise<void>,
  ) {}

  /** Adds a member with a role, wrapping the current read key to them. Role `none` adds nobody. */
  addMember(identity: string, role: Exclude<Role, 'owner'>): Promise<string> {
    if (role === 'none') throw new SvcError('request.invalid_field', 'role none adds nobody', { field: 'role' })
    this.mayGrant(role, identity)
    const st = this.s.acl.current()
    const keyId = st.readKeyId
    const rk = keyId && this.s.keyring.get(keyId)
    if (!keyId || !rk) throw new SvcError('space.read_only', 'no current read key for this space (a manager must rotate it)')
    return this.write({ type: 'add', identity, role, keyId, key: wrapKeyTo(this.s.deps.env, publicKeyOf(identity), rk) })
  }

  /** Changes a member's role; role `none` is a removal, which rotates the read key. */
  setRole(identity: string, role: Exclude<Role, 'owner'>): Promise<string> {
    if (role === 'none') return this.removeMember(identity)
    this.mayGrant(role, identity)
    return this.write({ type: 'role', identity, role })
  }

  /**
   * Removes a member and rotates the read key to everyone who stays. The record witnesses the
   * member's latest changes in every tree this replica holds: those (and what they build on)
   * stay; anything else it wrote without seeing its removal is void.
   */
  async removeMember(identity: string): Promise<string> {
    const trees = [...this.s.trees.keys()].filter((t) => t !== this.s.spaceId).sort()
    const witness = await removalWitness(this.s, identity, trees)
    return this.write({ type: 'remove', identity, rotation: this.newRotation([identity]), witness })
  }

  rotateReadKey(): Promise<string> {
    return this.write({ type: 'rotate', rotation: this.newRotation([]) })
  }

  /**
   * After records from peers: when the merged state has no untainted key, or a reader holds no
   * wrap of the current one, a manager rotates to every reader. Concurrent rotations by two
   * admins each wrapped their key to the members they knew; this closes what that left open.
   */
  async healIfNeeded(): Promise<string | undefined> {
    const st = this.s.acl.current()
    if (!st.canManage(this.s.me)) return undefined
    if (st.needsRotation() || this.shouldLinkKeyHeads()) return this.rotateReadKey()
    return undefined
  }

  /**
   * Concurrent rotations leave several keys no key links: a member the newest key was wrapped
   * to, but that another branch's rotation did not know of (added concurrently with it), can
   * never open what was sealed under that branch's key, so it and its peers never converge.
   * A rotation links every key head this manager can reach. So that two managers do not answer
   * each other's links forever, the author of the newest key leaves it to the author of another
   * head who still manages and can reach the newest key, and links them itself only when no such
   * author is left. Heads that
   * are all its own (two devices of one account) are left alone: both devices would decide alike
   * and answer each other's rotations forever.
   */
  private shouldLinkKeyHeads(): boolean {
    const st = this.s.acl.current()
    const latest = st.latestKeyId
    if (!latest) return false
    const authors = st.keyHeads().filter((k) => k !== latest && this.s.keyring.get(k)).map((k) => this.s.acl.entries.get(k)!.author)
    if (authors.length === 0) return false
    // Linking needs the newest key: a manager who cannot reach it would only fail to rotate.
    if (this.s.acl.entries.get(latest)!.author !== this.s.me) return !!this.s.keyring.get(latest)
    const foreign = authors.filter((a) => a !== this.s.me)
    // Defer only to a manager who can reach the newest key: after an owner's rotation on records
    // a concurrent removal voids, it was wrapped to the removed side only, and the other head's
    // author could never link it (hostile sweep seeds 61, 177, 187).
    return foreign.length > 0 && !foreign.some((a) => st.canManage(a) && st.reaches(a, latest))
  }

  /** A `merge` record over the valid frontier, so a writer cites one head: the merged state. */
  merge(prevIds: string[]): Promise<string> {
    return this.write({ type: 'merge' }, prevIds)
  }

  /** Only the owner grants admin, or changes an admin's role. */
  private mayGrant(role: Role, identity: string) {
    const st = this.s.acl.current()
    if (st.owner === this.s.me) return
    if (role === 'admin') throw new SvcError('space.read_only', 'only the owner grants admin')
    if (st.roleOf(identity) === 'admin') throw new SvcError('space.read_only', "only the owner changes an admin's role")
  }

  /**
   * A new key wrapped to every reader but `excluding`, linking every key no other key links
   * (after concurrent rotations there are several), so history stays reachable from it.
   */
  private newRotation(excluding: string[]): Rotation {
    const { env } = this.s.deps
    const st = this.s.acl.current()
    const next = env.randomBytes(32)
    const keys: Record<string, Uint8Array> = {}
    for (const id of st.readers()) if (!excluding.includes(id)) keys[id] = wrapKeyTo(env, publicKeyOf(id), next)
    const prevId = st.latestKeyId
    if (!prevId) return { keys }
    const prev = this.s.keyring.get(prevId)
    if (!prev) throw new SvcError('space.read_only', 'cannot rotate without the newest read key')
    const rot: Rotation = { keys, prev: seal(env, next, prev), prevKeyId: prevId }
    const others: Record<string, Uint8Array> = {}
    for (const k of st.keyHeads().slice(-LIMITS.maxRotationLinks)) {
      const key = k !== prevId ? this.s.keyring.get(k) : undefined
      if (key) others[k] = seal(env, next, key)
    }
    if (Object.keys(others).length) rot.others = others
    return rot
  }

  /** Signs a record over the valid frontier (never over a record the fold skipped). */
  private async write(record: AclRecord, prevIds?: string[]): Promise<string> {
    const s = this.s
    const c = s.acl.citation()
    const prev = prevIds ?? ('head' in c ? [c.head] : c.merge)
    const lamport = Math.max(...prev.map((h) => s.acl.entries.get(h)!.lamport)) + 1
    const change = await signChange(s.deps.crypto, s.key, {
      spaceId: s.spaceId, treeId: s.spaceId, prevIds: prev, aclHeadId: '', seq: ++s.seq, lamport, timestamp: s.deps.env.now(), readKeyId: '', payload: encodeAclRecord(record),
    })
    await this.commit(change)
    return change.id
  }
}
