import { xchacha20poly1305 } from '@noble/ciphers/chacha.js'

/**
 * XChaCha20-Poly1305 behind one interface, so a platform with a native ChaCha20-Poly1305
 * (node/crypto) can replace the pure-JS cipher: every ingested change is opened once, and
 * noble's cipher costs about as much per change as the rest of the apply stage.
 * Both functions take the 24-byte nonce and work on `ciphertext || tag`; `open` throws on
 * a wrong key or tampered bytes.
 */
export interface Aead {
  readonly name: string
  seal(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Uint8Array
  open(key: Uint8Array, nonce: Uint8Array, ciphertext: Uint8Array, aad?: Uint8Array): Uint8Array
  /**
   * `seal` writing `ciphertext || tag` into `dst` (room for the plaintext and 16 bytes; it may
   * be the plaintext's own memory: the plaintext is read whole first) and returning its length.
   * Where a platform has it, a large seal skips allocating its output (files' 1 MiB blocks).
   */
  sealInto?(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array | undefined, dst: Uint8Array): number
}

export const nobleAead: Aead = {
  name: 'noble',
  seal: (key, nonce, plaintext, aad) => xchacha20poly1305(key, nonce, aad).encrypt(plaintext),
  open: (key, nonce, ciphertext, aad) => xchacha20poly1305(key, nonce, aad).decrypt(ciphertext),
}
