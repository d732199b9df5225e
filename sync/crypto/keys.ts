import { ed25519, x25519 } from '@noble/curves/ed25519.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha512 } from '@noble/hashes/sha2.js'
import { entropyToMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { toBase58, fromBase58 } from '../core/ids.ts'
import { utf8 } from '../core/encoding.ts'
import { SvcError } from '../core/errors.ts'
import type { Env } from '../core/env.ts'

/** An Ed25519 key pair. `privateKey` is the 32-byte seed (RFC 8032). */
export interface KeyPair {
  readonly publicKey: Uint8Array
  readonly privateKey: Uint8Array
}

/** An account or device id: base58 of the Ed25519 public key. */
export type Identity = string

export const identityOf = (publicKey: Uint8Array): Identity => toBase58(publicKey)

export function publicKeyOf(identity: Identity): Uint8Array {
  let pub: Uint8Array
  try {
    pub = fromBase58(identity)
  } catch {
    throw new SvcError('request.invalid_field', 'identity is not base58')
  }
  if (pub.length !== 32) throw new SvcError('request.invalid_field', 'identity is not an Ed25519 key')
  return pub
}

export function keyPairFromSeed(seed: Uint8Array): KeyPair {
  if (seed.length !== 32) throw new SvcError('internal', 'Ed25519 seed must be 32 bytes')
  return { publicKey: ed25519.getPublicKey(seed), privateKey: seed }
}

/** A fresh device key: each device signs with its own key and uses it as its peer id. */
export const newDeviceKey = (env: Env): KeyPair => keyPairFromSeed(env.randomBytes(32))

export const newMnemonic = (env: Env): string => entropyToMnemonic(env.randomBytes(16), wordlist)

export const isValidMnemonic = (mnemonic: string): boolean => validateMnemonic(normalizeMnemonic(mnemonic), wordlist)

const normalizeMnemonic = (m: string) => m.trim().toLowerCase().split(/\s+/).join(' ')

const HARDENED = 0x80000000
// svc's SLIP-0044-style coin type; the path is m/44'/2046'/<index>'/0', all hardened, as
// SLIP-0010 requires for Ed25519.
export const ACCOUNT_COIN_TYPE = 2046
export const DEFAULT_DERIVATION_INDEX = 1

/** SLIP-0010 Ed25519 derivation along a hardened path. */
export function slip10Ed25519(seed: Uint8Array, path: number[]): Uint8Array {
  let I = hmac(sha512, utf8('ed25519 seed'), seed)
  let key = I.slice(0, 32)
  let chain = I.slice(32)
  for (const index of path) {
    const data = new Uint8Array(37)
    data[0] = 0
    data.set(key, 1)
    new DataView(data.buffer).setUint32(33, (index | HARDENED) >>> 0)
    I = hmac(sha512, chain, data)
    key = I.slice(0, 32)
    chain = I.slice(32)
  }
  return key
}

/** The account key a BIP39 mnemonic yields at a derivation index (default 1). */
export function accountKeyFromMnemonic(mnemonic: string, index = DEFAULT_DERIVATION_INDEX): KeyPair {
  const norm = normalizeMnemonic(mnemonic)
  if (!validateMnemonic(norm, wordlist)) throw new SvcError('auth.bad_mnemonic', 'mnemonic is not a valid BIP39 phrase')
  if (!Number.isInteger(index) || index < 0 || index >= HARDENED) {
    throw new SvcError('request.invalid_field', 'index must be a non-negative integer', { field: 'index' })
  }
  const seed = mnemonicToSeedSync(norm)
  return keyPairFromSeed(slip10Ed25519(seed, [44, ACCOUNT_COIN_TYPE, index, 0]))
}

/** X25519 forms of an Ed25519 key (RFC 7748 birational map), for wrapping keys to members. */
export const x25519PublicOf = (edPublic: Uint8Array): Uint8Array => ed25519.utils.toMontgomery(edPublic)
export const x25519SecretOf = (edSeed: Uint8Array): Uint8Array => ed25519.utils.toMontgomerySecret(edSeed)
export const x25519Shared = (secret: Uint8Array, pub: Uint8Array): Uint8Array => x25519.getSharedSecret(secret, pub)
export const x25519PublicFromSecret = (secret: Uint8Array): Uint8Array => x25519.getPublicKey(secret)
