import { ed25519 } from '@noble/curves/ed25519.js'
import { nobleAead, type Aead } from './aead.ts'

/**
 * Signature operations behind one interface. Ingest is dominated by signature checks, and the
 * platform's native Ed25519 (WebCrypto in Node 22 and current browsers) is roughly 8-20x faster
 * than pure JS, so the native path is used wherever it exists and noble is the fallback.
 */
export interface CryptoProvider {
  readonly name: string
  sign(privateKey: Uint8Array, message: Uint8Array): Promise<Uint8Array>
  /**
   * Signs many messages with one key, where the platform can sign them off the calling thread
   * and in parallel (the daemon's libuv pool); absent, callers sign one by one. Same signatures
   * as `sign` (Ed25519 is deterministic).
   */
  signMany?(privateKey: Uint8Array, messages: readonly Uint8Array[]): Promise<Uint8Array[]>
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean>
  /** The payload cipher; every change is opened once on ingest. */
  readonly aead: Aead
  /** A native SHA-256 where the platform has a synchronous one (change ids on ingest); else noble's. */
  readonly sha256?: (bytes: Uint8Array) => Uint8Array
}

export const nobleProvider: CryptoProvider = {
  name: 'noble',
  aead: nobleAead,
  async sign(privateKey, message) {
    return ed25519.sign(message, privateKey)
  },
  async verify(publicKey, message, signature) {
    try {
      return ed25519.verify(signature, message, publicKey)
    } catch {
      return false
    }
  },
}

// PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410), the only private-key import
// format WebCrypto accepts for Ed25519.
const PKCS8_PREFIX = new Uint8Array([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20])

type Subtle = SubtleCrypto

function makeWebCryptoProvider(subtle: Subtle): CryptoProvider {
  // Importing a key costs about as much as a verify; peers sign many changes with one key.
  const verifyKeys = new Map<string, Promise<CryptoKey>>()
  // Callers usually pass the same Uint8Array for one author (change.ts caches them), so an
  // identity lookup skips building the string key.
  const byInstance = new WeakMap<Uint8Array, Promise<CryptoKey>>()
  const signKeys = new Map<string, Promise<CryptoKey>>()
  const keyOf = (b: Uint8Array) => String.fromCharCode(...b)

  const verifyKey = (pub: Uint8Array) => {
    const hit = byInstance.get(pub)
    if (hit) return hit
    const k = keyOf(pub)
    let p = verifyKeys.get(k)
    if (!p) {
      p = subtle.importKey('raw', pub as BufferSource, { name: 'Ed25519' }, false, ['verify'])
      if (verifyKeys.size > 4096) verifyKeys.clear()
      verifyKeys.set(k, p)
    }
    byInstance.set(pub, p)
    return p
  }
  const signKey = (priv: Uint8Array) => {
    const k = keyOf(priv)
    let p = signKeys.get(k)
    if (!p) {
      const pkcs8 = new Uint8Array(48)
      pkcs8.set(PKCS8_PREFIX)
      pkcs8.set(priv, 16)
      p = subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, false, ['sign'])
      if (signKeys.size > 64) signKeys.clear()
      signKeys.set(k, p)
    }
    return p
  }

  return {
    name: 'webcrypto',
    aead: nobleAead,
    async sign(privateKey, message) {
      const key = await signKey(privateKey)
      return new Uint8Array(await subtle.sign('Ed25519', key, message as BufferSource))
    },
    async verify(publicKey, message, signature) {
      if (publicKey.length !== 32 || signature.length !== 64) return false
      try {
        const key = await verifyKey(publicKey)
        return await subtle.verify('Ed25519', key, signature as BufferSource, message as BufferSource)
      } catch {
        return false
      }
    },
  }
}

let detected: Promise<CryptoProvider> | undefined

/** The fastest provider this platform has, probed once with a real sign and verify. */
export function defaultCryptoProvider(): Promise<CryptoProvider> {
  detected ??= (async () => {
    const subtle = globalThis.crypto?.subtle
    if (!subtle) return nobleProvider
    try {
      const web = makeWebCryptoProvider(subtle)
      const seed = new Uint8Array(32).fill(7)
      const msg = new Uint8Array([1, 2, 3])
      const sig = await web.sign(seed, msg)
      const pub = ed25519.getPublicKey(seed)
      if (!(await web.verify(pub, msg, sig))) return nobleProvider
      if (!ed25519.verify(sig, msg, pub)) return nobleProvider
      return web
    } catch {
      return nobleProvider
    }
  })()
  return detected
}
