import { encode as cborEncode, decode as cborDecode } from 'cborg'
import { NOT_READ, readCanonical } from './cbor-reader.ts'

/**
 * Deterministic CBOR (RFC 8949 core deterministic encoding, as cborg does by default: map keys
 * sorted length-first, shortest integer and float forms). Every hash and signature in svc is
 * taken over bytes produced here, so two peers that hold the same value produce the same bytes.
 */
export function encodeCanonical(value: unknown): Uint8Array {
  return cborEncode(value, ENCODE_OPTIONS)
}

// An absent optional field and one set to undefined must encode the same.
const ENCODE_OPTIONS = { ignoreUndefinedProperties: true }

/**
 * Strict decode for bytes that arrived from a peer: duplicate map keys, undefined and
 * non-canonical forms are refused, so one logical value has exactly one accepted encoding.
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the shape it then checks; T defaults to unknown
export function decodeCanonical<T = unknown>(bytes: Uint8Array, opts: { byteViews?: boolean } = {}): T {
  // The common shapes are read directly; cborg reads everything else (see cbor-reader.ts).
  // `byteViews` (readCanonical's `views`) holds only where the direct reader reads: cborg copies.
  const v = readCanonical(bytes, opts.byteViews)
  if (v !== NOT_READ) return v as T
  return cborDecode(bytes, {
    strict: true,
    rejectDuplicateMapKeys: true,
    allowUndefined: false,
    allowIndefinite: false,
    useMaps: false,
  }) as T
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let n = 0
  for (const p of parts) n += p.length
  const out = new Uint8Array(n)
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

const utf8e = new TextEncoder()
const utf8d = new TextDecoder()
export const utf8 = (s: string): Uint8Array => utf8e.encode(s)
export const fromUtf8 = (b: Uint8Array): string => utf8d.decode(b)

export function toHex(b: Uint8Array): string {
  let s = ''
  for (const x of b) s += x.toString(16).padStart(2, '0')
  return s
}
