import { nobleAead, type Aead } from './aead.ts'
import { SvcError } from '../core/errors.ts'
import type { Env } from '../core/env.ts'

export const NONCE_BYTES = 24
export const KEY_BYTES = 32

/** XChaCha20-Poly1305 with a random 24-byte nonce prefixed: `nonce || ciphertext || tag`. */
export function seal(env: Env, key: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array, aead: Aead = nobleAead): Uint8Array {
  return sealWithNonce(key, env.randomBytes(NONCE_BYTES), plaintext, aad, aead)
}

export function sealWithNonce(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array, aead: Aead = nobleAead): Uint8Array {
  const ct = aead.seal(key, nonce, plaintext, aad)
  const out = new Uint8Array(NONCE_BYTES + ct.length)
  out.set(nonce)
  out.set(ct, NONCE_BYTES)
  return out
}

/** Opens a sealed box; throws `crypto.decrypt_failed` on a wrong key or tampered bytes. */
export function open(key: Uint8Array, sealed: Uint8Array, aad?: Uint8Array, aead: Aead = nobleAead): Uint8Array {
  if (sealed.length < NONCE_BYTES + 16) throw new SvcError('crypto.decrypt_failed', 'ciphertext too short')
  try {
    return aead.open(key, sealed.subarray(0, NONCE_BYTES), sealed.subarray(NONCE_BYTES), aad)
  } catch {
    throw new SvcError('crypto.decrypt_failed', 'ciphertext does not open under this key')
  }
}
