import { sha256 } from '@noble/hashes/sha2.js'
import { hkdf } from '@noble/hashes/hkdf.js'
import { createXXHash3, type IHasher } from 'hash-wasm'
import { toBase58 } from '../core/ids.ts'
import { utf8 } from '../core/encoding.ts'

export { sha256 }

/** HKDF-SHA256: every symmetric key svc derives from another secret goes through here. */
export function deriveKey(secret: Uint8Array, info: string, length = 32, salt?: Uint8Array): Uint8Array {
  return hkdf(sha256, secret, salt, utf8(info), length)
}

/** base58 of SHA-256: the content address of changes and derived ids. */
export const contentId = (bytes: Uint8Array, hash: (b: Uint8Array) => Uint8Array = sha256): string => toBase58(hash(bytes))

let xxh3: IHasher | undefined
let loading: Promise<IHasher> | undefined

/** Loads the xxh3 WebAssembly module once; afterwards property ids compute synchronously. */
export async function ensureXxh3(): Promise<void> {
  xxh3 ??= await (loading ??= createXXHash3())
}

/**
 * Property id: base58 of the 8-byte big-endian xxh3-64 of the creating changeId (spec:
 * "base58 of xxh3-64 of the creating changeId, up to 11 chars"). The xxh3 implementation is
 * WebAssembly, which runs the same in Node and browsers; call ensureXxh3() once first.
 */
export function propertyIdSync(changeId: string): string {
  if (!xxh3) throw new Error('xxh3 not loaded: await ensureXxh3() first')
  const hex = xxh3.init().update(changeId).digest('hex')
  const bytes = new Uint8Array(8)
  for (let i = 0; i < 8; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return toBase58(bytes)
}

export async function propertyIdFor(changeId: string): Promise<string> {
  await ensureXxh3()
  return propertyIdSync(changeId)
}
