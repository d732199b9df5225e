import { concatBytes } from '../core/encoding.ts'
import type { Env } from '../core/env.ts'
import { seal, open } from './box.ts'
import { deriveKey } from './hash.ts'
import { x25519PublicOf, x25519SecretOf, x25519Shared, x25519PublicFromSecret } from './keys.ts'
import { SvcError } from '../core/errors.ts'

const WRAP_INFO = 'svc/key-wrap/v1'
const EPHEMERAL_BYTES = 32

/**
 * Wraps a secret (a read key) to a member's Ed25519 identity: an ephemeral X25519 key agrees
 * with the member's X25519 form, HKDF binds both public keys, and XChaCha20-Poly1305 seals the
 * secret. Only the holder of the member's private key can unwrap. Output: `ephPub || box`.
 */
export function wrapKeyTo(env: Env, recipientEdPublic: Uint8Array, secret: Uint8Array): Uint8Array {
  const ephSecret = env.randomBytes(32)
  const ephPub = x25519PublicFromSecret(ephSecret)
  const recipientX = x25519PublicOf(recipientEdPublic)
  const shared = x25519Shared(ephSecret, recipientX)
  const kek = deriveKey(shared, WRAP_INFO, 32, concatBytes(ephPub, recipientX))
  return concatBytes(ephPub, seal(env, kek, secret))
}

export function unwrapKey(recipientEdSeed: Uint8Array, wrapped: Uint8Array): Uint8Array {
  if (wrapped.length <= EPHEMERAL_BYTES) throw new SvcError('crypto.decrypt_failed', 'wrapped key too short')
  const ephPub = wrapped.subarray(0, EPHEMERAL_BYTES)
  const xSecret = x25519SecretOf(recipientEdSeed)
  const recipientX = x25519PublicFromSecret(xSecret)
  const shared = x25519Shared(xSecret, ephPub)
  const kek = deriveKey(shared, WRAP_INFO, 32, concatBytes(ephPub, recipientX))
  return open(kek, wrapped.subarray(EPHEMERAL_BYTES))
}
