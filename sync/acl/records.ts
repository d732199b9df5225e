import { decodeCanonical, encodeCanonical } from '../core/encoding.ts'
import { isBase58 } from '../core/ids.ts'

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
  /** Which key `prev` holds: the read key current where the rotation was written. */
  prevKeyId?: string
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
  | { type: 'remove'; identity: string; rotation: Rotation }
  | { type: 'rotate'; rotation: Rotation }

export const encodeAclRecord = (r: AclRecord): Uint8Array => encodeCanonical(r)

export class InvalidAclRecord extends Error {}

const isRole = (r: unknown): r is Role => typeof r === 'string' && (ROLES as readonly string[]).includes(r)
const isBytes = (b: unknown): b is Uint8Array => b instanceof Uint8Array && b.length <= 4096

function checkRotation(r: unknown): asserts r is Rotation {
  if (typeof r !== 'object' || r === null) throw new InvalidAclRecord('rotation')
  const { keys, prev } = r as Rotation
  if (typeof keys !== 'object' || keys === null) throw new InvalidAclRecord('rotation keys')
  const entries = Object.entries(keys)
  if (entries.length > 10_000) throw new InvalidAclRecord('rotation keys')
  for (const [id, k] of entries) if (!isBase58(id) || !isBytes(k)) throw new InvalidAclRecord('rotation keys')
  if (prev !== undefined && !isBytes(prev)) throw new InvalidAclRecord('rotation prev')
  const { prevKeyId } = r as Rotation
  if ((prev === undefined) !== (prevKeyId === undefined) || (prevKeyId !== undefined && !isBase58(prevKeyId))) {
    throw new InvalidAclRecord('rotation prevKeyId')
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
      if (!isBase58(r.identity) || !isRole(r.role) || r.role === 'owner' || !isBase58(r.keyId) || !isBytes(r.key)) throw new InvalidAclRecord('add')
      return r
    case 'role':
      if (!isBase58(r.identity) || !isRole(r.role) || r.role === 'owner') throw new InvalidAclRecord('role')
      return r
    case 'remove':
      if (!isBase58(r.identity)) throw new InvalidAclRecord('remove')
      checkRotation(r.rotation)
      return r
    case 'rotate':
      checkRotation(r.rotation)
      return r
    default:
      throw new InvalidAclRecord('type')
  }
}
