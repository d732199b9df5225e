import { fromBase58 } from '../core/ids.ts'
import { SvcError } from '../core/errors.ts'
import { deriveKey } from '../crypto/hash.ts'
import { publicKeyOf, x25519PublicOf, x25519SecretOf, x25519Shared } from '../crypto/keys.ts'
import { derivedRoot, type Change } from '../dag/change.ts'
import { encodeAclRecord, type RootRecord } from './records.ts'

const PAIR_KEY_INFO = 'svc/pair-read-key/v1'

/** The two accounts of a one-to-one space, sorted: the same pair whichever side computes it. */
export function pairOf(a: string, b: string): [string, string] {
  publicKeyOf(a)
  publicKeyOf(b)
  if (a === b) throw new SvcError('request.invalid_field', 'a one-to-one space needs two different accounts', { field: 'otherIdentity' })
  return a < b ? [a, b] : [b, a]
}

/**
 * The derived ACL root of the one-to-one space of `a` and `b`: no author, time or randomness,
 * so both accounts (and anyone else) compute the same root and id without a message. Knowing the
 * id gives nothing: the first read key comes from the two accounts' key agreement.
 */
export function pairRoot(a: string, b: string): Change {
  const record: RootRecord = { type: 'root', owner: '', pair: pairOf(a, b) }
  return derivedRoot('', encodeAclRecord(record))
}

/** The space id of the one-to-one space of `a` and `b` (order-independent). */
export const pairSpaceId = (a: string, b: string): string => pairRoot(a, b).id

/**
 * The first read key of a one-to-one space: X25519 of one account's key with the other's
 * (both forms derived from the Ed25519 account keys), through HKDF with the space id as salt.
 * Each side computes it from its private key and the other's identity; nobody else can.
 */
export function pairReadKey(mySeed: Uint8Array, otherIdentity: string, spaceId: string): Uint8Array {
  const shared = x25519Shared(x25519SecretOf(mySeed), x25519PublicOf(publicKeyOf(otherIdentity)))
  return deriveKey(shared, PAIR_KEY_INFO, 32, fromBase58(spaceId))
}
