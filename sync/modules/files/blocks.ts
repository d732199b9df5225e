import { hmac } from '@noble/hashes/hmac.js'
import { concatBytes, utf8 } from '../../core/encoding.ts'
import { toBase58 } from '../../core/ids.ts'
import type { Aead } from '../../crypto/aead.ts'
import { deriveKey, sha256 } from '../../crypto/hash.ts'

/**
 * Block crypto (docs/files.md "Keys and addresses"). Per space and read-key epoch a files secret
 * `S = HKDF(readKey, "svc/files/v1")`. A block's plaintext `p` is sealed under its own
 * convergent key `k = HMAC-SHA256(S, "block" || SHA-256(p))` with XChaCha20-Poly1305, a zero
 * nonce (each key seals exactly one plaintext, so the nonce never repeats under a key) and the
 * AAD "svc/files/block/v1"; its address is `id = base58(SHA-256(ciphertext))`.
 *
 * Equal plaintext blocks in one space (one epoch) thus give equal ciphertext and one stored
 * block: dedup across files. A peer without `S` (outside the space) cannot test a guess of the
 * plaintext against an address, and any holder of a block (a relay, a disk) can check it
 * against its address without a key. The keys travel in the file record, which is sealed like
 * every change, so a member that can read the record can read its blocks whatever key epoch
 * wrote them.
 */
const BLOCK_AAD = utf8('svc/files/block/v1')
const KEY_LABEL = utf8('block')
const ROOT_LABEL = utf8('root')
const ZERO_NONCE = new Uint8Array(24)

export type Hash = (bytes: Uint8Array) => Uint8Array

export interface SealedBlock {
  /** base58 SHA-256 of `bytes`. */
  id: string
  /** The block's convergent key (32 bytes). */
  key: Uint8Array
  /** Ciphertext and tag (plaintext length + 16). */
  bytes: Uint8Array
}

/** The files secret of a space's read key. */
export const filesSecret = (readKey: Uint8Array): Uint8Array => deriveKey(readKey, 'svc/files/v1')

export function sealBlock(secret: Uint8Array, plain: Uint8Array, aead: Aead, hash: Hash = sha256): SealedBlock {
  const key = blockKey(secret, plain, hash)
  const bytes = aead.seal(key, ZERO_NONCE, plain, BLOCK_AAD)
  return { id: toBase58(hash(bytes)), key, bytes }
}

/**
 * `sealBlock` writing the block's bytes into `dst` (room for the plaintext and its tag; it may
 * be the plaintext's own memory) instead of a new buffer: the same id, key and bytes.
 */
export function sealBlockInto(secret: Uint8Array, plain: Uint8Array, aead: Aead, hash: Hash, dst: Uint8Array): SealedBlock {
  const key = blockKey(secret, plain, hash)
  let length: number
  if (aead.sealInto) length = aead.sealInto(key, ZERO_NONCE, plain, BLOCK_AAD, dst)
  else {
    const sealed = aead.seal(key, ZERO_NONCE, plain, BLOCK_AAD)
    dst.set(sealed)
    length = sealed.length
  }
  const bytes = dst.subarray(0, length)
  return { id: toBase58(hash(bytes)), key, bytes }
}

const blockKey = (secret: Uint8Array, plain: Uint8Array, hash: Hash) => hmac(sha256, secret, concatBytes(KEY_LABEL, hash(plain)))

/** The plaintext of a block; throws on a wrong key or tampered bytes. */
export function openBlock(key: Uint8Array, bytes: Uint8Array, aead: Aead): Uint8Array {
  return aead.open(key, ZERO_NONCE, bytes, BLOCK_AAD)
}

/** Whether `bytes` are the block `id` names (what every receiver checks before storing). */
export const isBlock = (id: string, bytes: Uint8Array, hash: Hash = sha256): boolean => toBase58(hash(bytes)) === id

/**
 * A file's root content id: keyed like block keys, so equal files in one space share it (the
 * cache drops their bytes together) and nobody outside the space can test a guess.
 */
export const rootContentId = (secret: Uint8Array, plaintextHash: Uint8Array): string => toBase58(hmac(sha256, secret, concatBytes(ROOT_LABEL, plaintextHash)))
