import { gcm } from '@noble/ciphers/aes.js'
import { concatBytes } from '../../core/encoding.ts'
import type { Env } from '../../core/env.ts'

/**
 * Payload sealing (chat.md): AES-256-GCM, a 12-byte random nonce prefixed to the ciphertext, no
 * AAD. Pure JS (noble) so a browser or a phone's JS runtime opens payloads with the same code;
 * decryption needs only `encKey`.
 */
export const PUSH_NONCE_BYTES = 12

export function sealPayload(env: Env, encKey: Uint8Array, plaintext: Uint8Array): Uint8Array {
  const nonce = env.randomBytes(PUSH_NONCE_BYTES)
  return concatBytes(nonce, gcm(encKey, nonce).encrypt(plaintext))
}

/** Throws on a wrong key, tampered bytes or a too-short input. */
export function openPayload(encKey: Uint8Array, sealed: Uint8Array): Uint8Array {
  if (sealed.length < PUSH_NONCE_BYTES + 16) throw new Error('sealed push payload too short')
  return gcm(encKey, sealed.subarray(0, PUSH_NONCE_BYTES)).decrypt(sealed.subarray(PUSH_NONCE_BYTES))
}
