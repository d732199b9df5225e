import { scrypt } from '@noble/hashes/scrypt.js'
import { decodeCanonical, encodeCanonical, utf8 } from '../core/encoding.ts'
import { SvcError } from '../core/errors.ts'
import type { Env } from '../core/env.ts'
import { seal, open } from './box.ts'
import { keyPairFromSeed, type KeyPair } from './keys.ts'

/**
 * Wallet key file: the account key and this device's key, as stored on disk by node/ (mode
 * 0600). Without a passkey the keys are stored in the clear (the OS user is the trust
 * boundary, as for SSH keys); with one, scrypt stretches it into an XChaCha20-Poly1305 key.
 *
 * On disk (JSON, so a person can tell what it is):
 *   {"format":"svc-wallet","version":1,"kdf":null|{"name":"scrypt","N":..,"r":..,"p":..,"salt":b64},
 *    "data":b64}
 * `data` is CBOR {account: seed32, device: seed32, index: number}, sealed when `kdf` is set.
 */
export interface WalletKeys {
  account: KeyPair
  device: KeyPair
  /** Derivation index the account key came from. */
  index: number
}

interface ScryptParams {
  name: 'scrypt'
  N: number
  r: number
  p: number
  salt: string
}

interface WalletFile {
  format: 'svc-wallet'
  version: 1
  kdf: ScryptParams | null
  data: string
}

// 2^15 costs about 0.1 s here: once per boot, and slows offline guessing.
export const DEFAULT_SCRYPT = { N: 1 << 15, r: 8, p: 1 }

const b64 = (b: Uint8Array) => toB64(b)
const unb64 = (s: string) => fromB64(s)

function toB64(b: Uint8Array): string {
  let s = ''
  for (const x of b) s += String.fromCharCode(x)
  return btoa(s)
}
function fromB64(s: string): Uint8Array {
  const bin = atob(s)
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}

const AAD = utf8('svc-wallet/v1')

export function encodeWallet(env: Env, keys: WalletKeys, passkey?: string, params = DEFAULT_SCRYPT): string {
  const plain = encodeCanonical({ account: keys.account.privateKey, device: keys.device.privateKey, index: keys.index })
  let file: WalletFile
  if (passkey !== undefined && passkey !== '') {
    const salt = env.randomBytes(16)
    const key = scrypt(utf8(passkey), salt, { N: params.N, r: params.r, p: params.p, dkLen: 32 })
    file = { format: 'svc-wallet', version: 1, kdf: { name: 'scrypt', ...params, salt: b64(salt) }, data: b64(seal(env, key, plain, AAD)) }
  } else {
    file = { format: 'svc-wallet', version: 1, kdf: null, data: b64(plain) }
  }
  return JSON.stringify(file) + '\n'
}

export const walletNeedsPasskey = (text: string): boolean => parseWalletFile(text).kdf !== null

function parseWalletFile(text: string): WalletFile {
  let f: WalletFile
  try {
    f = JSON.parse(text) as WalletFile
  } catch {
    throw new SvcError('auth.device_key_corrupt', 'wallet key file is not readable')
  }
  if (f?.format !== 'svc-wallet' || f.version !== 1 || typeof f.data !== 'string') {
    throw new SvcError('auth.device_key_corrupt', 'wallet key file is not readable')
  }
  return f
}

export function decodeWallet(text: string, passkey?: string): WalletKeys {
  const f = parseWalletFile(text)
  let plain: Uint8Array
  if (f.kdf) {
    if (passkey === undefined || passkey === '') throw new SvcError('auth.passkey_required', 'this wallet is encrypted; a passkey is required')
    const { N, r, p, salt } = f.kdf
    const key = scrypt(utf8(passkey), unb64(salt), { N, r, p, dkLen: 32 })
    try {
      plain = open(key, unb64(f.data), AAD)
    } catch {
      throw new SvcError('auth.passkey_required', 'the passkey does not open this wallet')
    }
  } else {
    plain = unb64(f.data)
  }
  try {
    const v = decodeCanonical<{ account: Uint8Array; device: Uint8Array; index: number }>(plain)
    return { account: keyPairFromSeed(v.account), device: keyPairFromSeed(v.device), index: v.index }
  } catch {
    throw new SvcError('auth.device_key_corrupt', 'wallet key file is not readable')
  }
}
