import { SvcError } from '../core/errors.ts'
import { LIMITS } from '../core/limits.ts'
import { open, seal } from '../crypto/box.ts'
import { profileAad } from '../acl/profile-seal.ts'
import { bytesEqual, encodeCanonical } from '../core/encoding.ts'
import { identityOf, keyPairFromSeed, publicKeyOf } from '../crypto/keys.ts'
import { encodeInviteToken } from '../acl/invite-token.ts'
import type { JoinRequest } from '../acl/requests.ts'
import { wrapKeyTo } from '../crypto/wrap.ts'
import { signChange, type Change } from '../dag/change.ts'
import { encodeAclRecord, type AclRecord, type InvitePermission, type Role, type Rotation } from '../acl/records.ts'
import { removalWitness } from './acl-rules.ts'
import type { ReplicaState } from './replica-state.ts'

/** An invite just written: its record, the private seed only the minting account keeps, its token. */
export interface MintedInvite {
  recordId: string
  privateKey: Uint8Array
  token: string
}

/** A member's profile as it is sealed in a `profile` record. */
export interface ProfileFields {
  name?: string
  description?: string
  iconCid?: string
}

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
  addMember(identity: string, role: Exclude<Role, 'owner'>, request?: string): Promise<string> {
    if (role === 'none') throw new SvcError('request.invalid_field', 'role none adds nobody', { field: 'role' })
    this.mayGrant(role, identity)
    const st = this.s.acl.current()
    const keyId = st.readKeyId
    const rk = keyId && this.s.keyring.get(keyId)
    if (!keyId || !rk) throw new SvcError('space.read_only', 'no current read key for this space (a manager must rotate it)')
    const key = wrapKeyTo(this.s.deps.env, publicKeyOf(identity), rk)
    return this.write(request === undefined ? { type: 'add', identity, role, keyId, key } : { type: 'add', identity, role, keyId, key, request })
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
  async removeMember(identity: string, alsoExcluding: readonly string[] = []): Promise<string> {
    const trees = [...this.s.trees.keys()].filter((t) => t !== this.s.spaceId).sort()
    const witness = await removalWitness(this.s, identity, trees)
    return this.write({ type: 'remove', identity, rotation: this.newRotation([identity, ...alsoExcluding]), witness })
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
    const authors = st
      .keyHeads()
      .filter((k) => k !== latest && this.s.keyring.get(k))
      .map((k) => this.s.acl.entries.get(k)!.author)
    if (authors.length === 0) return false
    // Linking needs the newest key: a manager who cannot reach it would only fail to rotate.
    if (this.s.acl.entries.get(latest)!.author !== this.s.me) return !!this.s.keyring.get(latest)
    const foreign = authors.filter((a) => a !== this.s.me)
    // Defer only to a manager who can reach the newest key: after an owner's rotation on records
    // a concurrent removal voids, it was wrapped to the removed side only, and the other head's
    // author could never link it (hostile sweep seeds 61, 177, 187).
    return foreign.length > 0 && !foreign.some((a) => st.canManage(a) && st.reaches(a, latest))
  }

  // ------------------------------------------------------------ sharing

  /**
   * Mints an invite: a fresh Ed25519 key whose public half goes on the ACL; the private seed
   * (in the token) is what a joiner signs its proof with. `replaces` revokes every live
   * non-guest invite this replica knows (POST {S}/invites). Guest invites: owner only.
   */
  async createInvite(permission: InvitePermission, opts: { replaces?: boolean } = {}): Promise<MintedInvite> {
    const st = this.s.acl.current()
    if (st.pair) throw new SvcError('space.read_only', 'a one-to-one space has no invites')
    if (permission === 'guest' ? st.owner !== this.s.me : !st.canManage(this.s.me)) {
      throw new SvcError('space.read_only', permission === 'guest' ? 'only the owner creates the guest key' : 'only owners and admins invite')
    }
    const privateKey = this.s.deps.env.randomBytes(32)
    const key = identityOf(keyPairFromSeed(privateKey).publicKey)
    const record: AclRecord = opts.replaces ? { type: 'invite', key, permission, replaces: true } : { type: 'invite', key, permission }
    const recordId = await this.write(record)
    return { recordId, privateKey, token: encodeInviteToken(this.s.spaceId, privateKey, { inviteId: recordId, guest: permission === 'guest' }) }
  }

  /** Revokes live invites by record id (`invite.not_found` when none of them is live). */
  revokeInvites(ids: readonly string[]): Promise<string> {
    const st = this.s.acl.current()
    const live = new Map(st.invites().map((i) => [i.recordId, i]))
    const chosen = [...new Set(ids)].filter((id) => live.has(id)).sort()
    if (chosen.length === 0) throw new SvcError('invite.not_found', 'no live invite with that id')
    if (chosen.some((id) => live.get(id)!.permission === 'guest') && st.owner !== this.s.me) throw new SvcError('space.read_only', 'only the owner revokes the guest key')
    if (!st.canManage(this.s.me)) throw new SvcError('space.read_only', 'only owners and admins revoke invites')
    return this.write({ type: 'uninvite', invites: chosen.slice(0, LIMITS.maxUninviteIds) })
  }

  /** Accepts a pending join request: adds its joiner with the invite's role and the current key. */
  acceptJoin(requestId: string): Promise<string> {
    const req = this.pendingRequest(requestId)
    return this.addMember(req.joiner, req.role!, requestId)
  }

  declineJoin(requestId: string): Promise<string> {
    this.pendingRequest(requestId)
    if (!this.s.acl.current().canManage(this.s.me)) throw new SvcError('space.read_only', 'only owners and admins decide join requests')
    return this.write({ type: 'decline', request: requestId })
  }

  /**
   * A manager device accepts every pending join through a guest invite by itself. Idempotent:
   * an accepted request is no longer pending. Two manager devices doing it concurrently write two
   * `add` records of role guest for one joiner, which the fold resolves to the same role.
   */
  async autoAcceptGuests(): Promise<string[]> {
    const st = this.s.acl.current()
    if (!st.canManage(this.s.me) || !st.readKeyId || !this.s.keyring.get(st.readKeyId)) return []
    const out: string[] = []
    for (const req of st.requests()) {
      // A member already in the space is not demoted to guest by its own join.
      if (req.status !== 'pending' || req.role !== 'guest' || st.canRead(req.joiner)) continue
      out.push(await this.addMember(req.joiner, 'guest', req.recordId))
    }
    return out
  }

  /**
   * DELETE {S}/guest-key: revokes every live guest invite and removes every guest. Each removal
   * rotates, and every rotation leaves out all the guests, so no key written here reaches one.
   */
  async revokeGuest(): Promise<string[]> {
    const st = this.s.acl.current()
    if (st.owner !== this.s.me) throw new SvcError('space.read_only', 'only the owner revokes the guest key')
    const out: string[] = []
    const guestInvites = st
      .invites()
      .filter((i) => i.permission === 'guest')
      .map((i) => i.recordId)
    if (guestInvites.length) out.push(await this.revokeInvites(guestInvites))
    const guests = [...st.roles]
      .filter(([, r]) => r === 'guest')
      .map(([id]) => id)
      .sort()
    for (const g of guests) out.push(await this.removeMember(g, guests))
    return out
  }

  /** Publishes this member's profile, sealed under the current read key. */
  setProfile(fields: ProfileFields): Promise<string> {
    const st = this.s.acl.current()
    const keyId = st.readKeyId
    const rk = keyId && this.s.keyring.get(keyId)
    if (!st.canRead(this.s.me) || !keyId || !rk) throw new SvcError('space.read_only', 'no current read key for this space')
    const plain: ProfileFields = {}
    for (const k of ['name', 'description', 'iconCid'] as const) if (typeof fields[k] === 'string') plain[k] = fields[k]
    const bytes = encodeCanonical(plain)
    const aad = profileAad(this.s.spaceId, this.s.me)
    // Publishing the same profile again (every PUT /v1/account/metadata reaches every space)
    // writes nothing while the newest one is sealed under the current key.
    const mine = st.profiles().get(this.s.me)
    if (mine && mine.keyId === keyId) {
      try {
        if (bytesEqual(open(rk, mine.sealed, aad), bytes)) return Promise.resolve(mine.recordId)
      } catch {
        // Ours but unreadable: publish again.
      }
    }
    return this.write({ type: 'profile', keyId, sealed: seal(this.s.deps.env, rk, bytes, aad) })
  }

  private pendingRequest(requestId: string): JoinRequest {
    const req = this.s.acl
      .current()
      .requests()
      .find((q) => q.recordId === requestId)
    if (!req) throw new SvcError('invite.not_found', 'no join request with that id')
    if (req.status !== 'pending' || !req.role) throw new SvcError('space.join_not_pending', `the join request is ${req.status}`)
    return req
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
      spaceId: s.spaceId,
      treeId: s.spaceId,
      prevIds: prev,
      aclHeadId: '',
      seq: ++s.seq,
      lamport,
      timestamp: s.deps.env.now(),
      readKeyId: '',
      payload: encodeAclRecord(record),
    })
    await this.commit(change)
    return change.id
  }
}
