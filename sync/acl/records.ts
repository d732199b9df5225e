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
 * readable by every member, and the only secrets (read keys) are individually wrapped.
 * `nonce` makes a non-derived space root unique; a derived root has `seed` instead.
 */
export type AclRecord =
  | { type: 'root'; owner: string; nonce?: Uint8Array; seed?: string; rotation?: Rotation }
  | { type: 'add'; identity: string; role: Role; keyId: string; key: Uint8Array }
  | { type: 'role'; identity: string; role: Role }
  | RemoveRecord
  | { type: 'rotate'; rotation: Rotation }
  | { type: 'merge' }

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

export function decodeAclRecord(bytes: Uint8Array): AclRecord {
  let r: AclRecord
  try {
    r = decodeCanonical<AclRecord>(bytes)
  } catch {
    throw new InvalidAclRecord('not CBOR')
  }
  if (typeof r !== 'object' || r === null) throw new InvalidAclRecord('shape')
  switch (r.type) {
    case 'root':
      if (!isBase58(r.owner)) throw new InvalidAclRecord('owner')
      if (r.nonce !== undefined && !isBytes(r.nonce)) throw new InvalidAclRecord('nonce')
      if (r.seed !== undefined && typeof r.seed !== 'string') throw new InvalidAclRecord('seed')
      if (r.rotation !== undefined) checkRotation(r.rotation)
      return r
    case 'add':
      if (!isBase58(r.identity) || !isGrantRole(r.role) || !isBase58(r.keyId) || !isBytes(r.key)) throw new InvalidAclRecord('add')
      return r
    case 'role':
      if (!isBase58(r.identity) || !isGrantRole(r.role)) throw new InvalidAclRecord('role')
      return r
    case 'remove':
      if (!isBase58(r.identity)) throw new InvalidAclRecord('remove')
      checkRotation(r.rotation)
      checkWitness(r.witness)
      return r
    case 'rotate':
      checkRotation(r.rotation)
      return r
    case 'merge':
      if (Object.keys(r).length !== 1) throw new InvalidAclRecord('merge')
      return r
    default:
      throw new InvalidAclRecord('type')
  }
}
