import { toHex } from '../../core/encoding.ts'
import { toBase58 } from '../../core/ids.ts'
import { deriveKey, sha256 } from '../../crypto/hash.ts'
import { keyPairFromSeed, type KeyPair } from '../../crypto/keys.ts'
import type { SpaceReplica } from '../../replica/space-replica.ts'

/**
 * Push keys (chat.md "Push keys and payload"):
 * - the space push key, Ed25519, from the space's first read key: every member reaches that key
 *   (through the `prev` chain of later keys), it never changes, so every member derives the same
 *   key and the push node's space identifier (`spaceKey`, base58 of its public key) is stable
 *   across rotations. The spec's "first metadata key" is this project's first read key: it is the
 *   one secret of the space every member holds from its first day.
 * - the payload key, AES-256, one-way (HKDF) from the current read key: it rotates with the read
 *   key, so a member removed before a rotation cannot open payloads sealed after it.
 * - `encKeyId`: lowercase hex SHA-256 of the payload key (the receiver's cache key).
 */
const SPACE_KEY_INFO = 'svc/push/space-key/v1'
const PAYLOAD_KEY_INFO = 'svc/push/payload-key/v1'

export const spacePushKeyOf = (firstReadKey: Uint8Array): KeyPair => keyPairFromSeed(deriveKey(firstReadKey, SPACE_KEY_INFO))
export const payloadKeyOf = (readKey: Uint8Array): Uint8Array => deriveKey(readKey, PAYLOAD_KEY_INFO)
export const encKeyIdOf = (encKey: Uint8Array): string => toHex(sha256(encKey))
/** The push node's identifier of a space: base58 of the push public key. */
export const spaceKeyIdOf = (pushKey: KeyPair): string => toBase58(pushKey.publicKey)

/** What the key mirror writes into the space row (`push`), and what a sender needs. */
export interface PushKeys {
  pushKey: KeyPair
  /** base58 of the push public key: the push node's space identifier. */
  spaceKey: string
  encKey: Uint8Array
  encKeyId: string
}

/**
 * The push keys of a space as this member reaches them, or undefined when it cannot (no read
 * key yet, or a key it was never given).
 */
export function pushKeysOf(replica: Pick<SpaceReplica, 'acl' | 'keyring'>): PushKeys | undefined {
  const keyring = replica.keyring
  const st = replica.acl.current()
  const first = st.keys.keys().next().value
  const current = st.readKeyId
  if (first === undefined || current === undefined) return undefined
  const firstKey = keyring.get(first)
  const readKey = keyring.get(current)
  if (!firstKey || !readKey) return undefined
  const pushKey = spacePushKeyOf(firstKey)
  const encKey = payloadKeyOf(readKey)
  return { pushKey, spaceKey: spaceKeyIdOf(pushKey), encKey, encKeyId: encKeyIdOf(encKey) }
}
