import { decodeCanonical, encodeCanonical } from '../core/encoding.ts'
import { isBase58 } from '../core/ids.ts'
import { LIMITS } from '../core/limits.ts'

export type Role = 'owner' | 'admin' | 'writer' | 'reader' | 'guest' | 'none'
export const ROLES: readonly Role[] = ['owner', 'admin', 'writer', 'reader', 'guest', 'none']

export const canWrite = (r: Role | undefined) => r === 'owner' || r === 'admin' || r === 'writer'
export const canManage = (r: Role | undefined) => r === 'owner' || r === 'admin'
export const canRead = (r: Role | undefined) => r !== undefined && r !== 'none'

/**
 * A read-key change: the new key wrapped to every member who keeps access, and the previous
 * key sealed under the new one, so whoever holds the newest key can walk back through history
 * while a removed member, who gets no wrap, reads nothing sealed under the new key.
 */
export interface Rotation {
  keys: Record<string, Uint8Array>
  /** The previous read key sealed under the new one; absent for a space's first key. */
  prev?: Uint8Array
  /** Which key `prev` holds: the newest key of the state the rotation was written at. */
  prevKeyId?: string
  /**
   * Other keys sealed under the new one, by key id: after concurrent rotations the merged
   * state has several newest keys, and one `prev` link would leave all but one branch of
   * history unreadable to members added later.
   */
  others?: Record<string, Uint8Array>
}

/**
 * The ACL records (DESIGN 4), carried in plain payloads of the space's ACL tree: roles must be
 * readable by every member, and the only secrets (read keys, profiles) are individually wrapped
 * or sealed. `nonce` makes a non-derived space root unique; a derived root has `seed` instead,
 * or `pair` (a one-to-one space: two accounts, sorted, `owner` empty; docs/sharing.md).
 */
export type AclRecord =
  | RootRecord
  | { type: 'add'; identity: string; role: Role; keyId: string; key: Uint8Array; request?: string }
  | { type: 'role'; identity: string; role: Role }
  | RemoveRecord
  | { type: 'rotate'; rotation: Rotation }
  | { type: 'merge' }
  | InviteRecord
  | { type: 'uninvite'; invites: string[] }
  | JoinRecord
  | { type: 'cancel'; request: string }
  | { type: 'decline'; request: string }
  | ProfileRecord

export interface RootRecord {
  type: 'root'
  owner: string
  nonce?: Uint8Array
  seed?: string
  rotation?: Rotation
  pair?: [string, string]
}

/** What an invite lets its holder become: reader, writer, or guest (owner-minted, auto-accepted). */
export type InvitePermission = 'reader' | 'writer' | 'guest'
export const INVITE_PERMISSIONS: readonly InvitePermission[] = ['reader', 'writer', 'guest']

/**
 * An invite: `key` is the invite's Ed25519 public key (base58); whoever holds its private key
 * (the token) can sign a join proof. `replaces` revokes every live non-guest invite in its
 * causal past.
 */
export interface InviteRecord {
  type: 'invite'
  key: string
  permission: InvitePermission
  replaces?: true
}

/** Shown to the managers deciding a join: plain, since they must see who asks. */
export interface JoinMetadata {
  name?: string
  iconCid?: string
}

/**
 * A join request, authored (change author and signature) by the joining account. `proof` is the
 * invite key's signature over `joinProofBytes(spaceId, joiner, invite)`.
 */
export interface JoinRecord {
  type: 'join'
  invite: string
  proof: Uint8Array
  metadata?: JoinMetadata
}

/** A member's own profile `{name, description, iconCid}`, sealed under read key `keyId`. */
export interface ProfileRecord {
  type: 'profile'
  sealed: Uint8Array
  keyId: string
}

/**
 * A removal. `witness` names, per object tree (roots included), the removed member's changes
 * that were maximal among its changes there as the remover knew them: object trees are DAGs
 * apart from the ACL's, so this is how a removal says which of the member's writes it saw.
 * Sorted, at most LIMITS.maxRemovalWitness ids; absent means none.
 */
export interface RemoveRecord {
  type: 'remove'
  identity: string
  rotation: Rotation
  witness?: string[]
}

/** Roles a grant may give: `none` is not granted but removed (a `remove` record, which rotates). */
export type GrantRole = Exclude<Role, 'owner' | 'none'>

export const encodeAclRecord = (r: AclRecord): Uint8Array => encodeCanonical(r)

export class InvalidAclRecord extends Error {}

const isRole = (r: unknown): r is Role => typeof r === 'string' && (ROLES as readonly string[]).includes(r)
/** Role `none` in a grant would revoke access without rotating the key: a removal is a `remove`. */
const isGrantRole = (r: unknown): r is GrantRole => isRole(r) && r !== 'owner' && r !== 'none'
const isBytes = (b: unknown): b is Uint8Array => b instanceof Uint8Array && b.length <= 4096

function checkRotation(r: unknown): asserts r is Rotation {
  if (typeof r !== 'object' || r === null) throw new InvalidAclRecord('rotation')
  const { keys, prev } = r as Rotation
  if (typeof keys !== 'object' || keys === null) throw new InvalidAclRecord('rotation keys')
  const entries = Object.entries(keys)
  if (entries.length > 10_000) throw new InvalidAclRecord('rotation keys')
  for (const [id, k] of entries) if (!isBase58(id) || !isBytes(k)) throw new InvalidAclRecord('rotation keys')
  if (prev !== undefined && !isBytes(prev)) throw new InvalidAclRecord('rotation prev')
  const { prevKeyId, others } = r as Rotation
  if ((prev === undefined) !== (prevKeyId === undefined) || (prevKeyId !== undefined && !isBase58(prevKeyId))) {
    throw new InvalidAclRecord('rotation prevKeyId')
  }
  if (others !== undefined) {
    if (typeof others !== 'object' || others === null || prev === undefined) throw new InvalidAclRecord('rotation others')
    const linked = Object.entries(others)
    if (linked.length > LIMITS.maxRotationLinks) throw new InvalidAclRecord('rotation others')
    for (const [id, k] of linked) if (!isBase58(id) || id === prevKeyId || !isBytes(k)) throw new InvalidAclRecord('rotation others')
  }
}

function checkWitness(w: unknown): void {
  if (w === undefined) return
  if (!Array.isArray(w) || w.length > LIMITS.maxRemovalWitness) throw new InvalidAclRecord('witness')
  for (let i = 0; i < w.length; i++) {
    if (typeof w[i] !== 'string' || !isBase58(w[i]) || (i > 0 && w[i - 1] >= w[i])) throw new InvalidAclRecord('witness')
  }
}

/** Longest display text a join's metadata may carry. */
const MAX_META_TEXT = 256

/** Strict shape: a field the record type does not know makes the record malformed. */
function only(r: object, allowed: readonly string[], what: string) {
  for (const k of Object.keys(r)) if (!allowed.includes(k)) throw new InvalidAclRecord(what)
}

const isText = (s: unknown, max = MAX_META_TEXT) => typeof s === 'string' && s.length <= max

function checkRoot(r: RootRecord) {
  only(r, ['type', 'owner', 'nonce', 'seed', 'rotation', 'pair'], 'root')
  if (r.nonce !== undefined && !isBytes(r.nonce)) throw new InvalidAclRecord('nonce')
  if (r.seed !== undefined && !isText(r.seed, 1024)) throw new InvalidAclRecord('seed')
  if (r.rotation !== undefined) checkRotation(r.rotation)
  if (r.pair === undefined) {
    if (!isBase58(r.owner)) throw new InvalidAclRecord('owner')
    return
  }
  // A one-to-one root: derived from the two accounts alone, so no owner, nonce, seed or key.
  const p = r.pair
  if (!Array.isArray(p) || p.length !== 2 || !isBase58(p[0]) || !isBase58(p[1]) || !(p[0] < p[1])) throw new InvalidAclRecord('pair')
  if (r.owner !== '' || r.nonce !== undefined || r.seed !== undefined || r.rotation !== undefined) throw new InvalidAclRecord('pair root')
}

function checkMetadata(m: unknown) {
  if (m === undefined) return
  if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new InvalidAclRecord('metadata')
  only(m, ['name', 'iconCid'], 'metadata')
  const { name, iconCid } = m as JoinMetadata
  if ((name !== undefined && !isText(name)) || (iconCid !== undefined && !isText(iconCid))) throw new InvalidAclRecord('metadata')
}

export function decodeAclRecord(bytes: Uint8Array): AclRecord {
  let r: AclRecord
  try {
    r = decodeCanonical<AclRecord>(bytes)
  } catch {
    throw new InvalidAclRecord('not CBOR')
  }
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new InvalidAclRecord('shape')
  switch (r.type) {
    case 'root':
      checkRoot(r)
      return r
    case 'add':
      only(r, ['type', 'identity', 'role', 'keyId', 'key', 'request'], 'add')
      if (!isBase58(r.identity) || !isGrantRole(r.role) || !isBase58(r.keyId) || !isBytes(r.key)) throw new InvalidAclRecord('add')
      if (r.request !== undefined && !isBase58(r.request)) throw new InvalidAclRecord('add request')
      return r
    case 'role':
      only(r, ['type', 'identity', 'role'], 'role')
      if (!isBase58(r.identity) || !isGrantRole(r.role)) throw new InvalidAclRecord('role')
      return r
    case 'remove':
      only(r, ['type', 'identity', 'rotation', 'witness'], 'remove')
      if (!isBase58(r.identity)) throw new InvalidAclRecord('remove')
      checkRotation(r.rotation)
      checkWitness(r.witness)
      return r
    case 'rotate':
      only(r, ['type', 'rotation'], 'rotate')
      checkRotation(r.rotation)
      return r
    case 'merge':
      if (Object.keys(r).length !== 1) throw new InvalidAclRecord('merge')
      return r
    case 'invite':
      only(r, ['type', 'key', 'permission', 'replaces'], 'invite')
      if (!isBase58(r.key) || r.key.length > 64 || !(INVITE_PERMISSIONS as readonly string[]).includes(r.permission)) throw new InvalidAclRecord('invite')
      if (r.replaces !== undefined && r.replaces !== true) throw new InvalidAclRecord('invite replaces')
      return r
    case 'uninvite': {
      only(r, ['type', 'invites'], 'uninvite')
      const ids = r.invites
      if (!Array.isArray(ids) || ids.length === 0 || ids.length > LIMITS.maxUninviteIds) throw new InvalidAclRecord('uninvite')
      for (let i = 0; i < ids.length; i++) if (!isBase58(ids[i]) || (i > 0 && ids[i - 1] >= ids[i])) throw new InvalidAclRecord('uninvite')
      return r
    }
    case 'join':
      only(r, ['type', 'invite', 'proof', 'metadata'], 'join')
      if (!isBase58(r.invite) || !(r.proof instanceof Uint8Array) || r.proof.length !== 64) throw new InvalidAclRecord('join')
      checkMetadata(r.metadata)
      return r
    case 'cancel':
    case 'decline':
      only(r, ['type', 'request'], r.type)
      if (!isBase58(r.request)) throw new InvalidAclRecord(r.type)
      return r
    case 'profile':
      only(r, ['type', 'sealed', 'keyId'], 'profile')
      if (!(r.sealed instanceof Uint8Array) || r.sealed.length > LIMITS.maxProfileBytes || !isBase58(r.keyId)) throw new InvalidAclRecord('profile')
      return r
    default:
      throw new InvalidAclRecord('type')
  }
}
