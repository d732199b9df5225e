/**
 * The crypto provider of the daemon (and of the simulator's Node entry points): Ed25519 and
 * ChaCha20-Poly1305 from node:crypto (OpenSSL). Measured on these machines (2 cores): OpenSSL
 * verifies about 1.7x as many Ed25519 signatures a second as WebCrypto's Ed25519 in the same
 * process, whose per-call promise and key-handle overhead dominate, and opens a change payload
 * about 5x faster than @noble/ciphers. Signatures are identical on every path (Ed25519 is
 * deterministic), so peers on different providers interoperate.
 *
 * `verify: 'threadpool'` (the daemon) runs each verify on libuv's pool so big backlogs use
 * every core without blocking the event loop; `'sync'` (the simulator, which runs one event at
 * a time) verifies inline, without a pool round trip per call.
 */
import { createCipheriv, createDecipheriv, createPrivateKey, hash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { hchacha } from '@noble/ciphers/chacha.js'
import type { Aead } from '../../sync/crypto/aead.ts'
import type { CryptoProvider } from '../../sync/crypto/provider.ts'

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')
const TAG_BYTES = 16

export interface NodeCryptoOptions {
  verify: 'sync' | 'threadpool'
}

export function nodeCryptoProvider(opts: NodeCryptoOptions = { verify: 'threadpool' }): CryptoProvider {
  const privs = new Map<string, KeyObject>()
  const pubs = new Map<string, KeyObject>()
  // Keys are cached by value: peers sign many changes with one key, and building a KeyObject
  // costs about as much as a verify.
  const cached = (m: Map<string, KeyObject>, raw: Uint8Array, make: () => KeyObject) => {
    const k = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1')
    let v = m.get(k)
    if (!v) {
      if (m.size > 4096) m.clear()
      m.set(k, (v = make()))
    }
    return v
  }
  // Callers pass the same Uint8Array for one author (change.ts caches public keys), so an
  // identity lookup skips building the string key on every verify.
  const privKey = (raw: Uint8Array) => cached(privs, raw, () => createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, raw]), format: 'der', type: 'pkcs8' }))
  const byInstance = new WeakMap<Uint8Array, KeyObject>()
  const pubKey = (pub: Uint8Array) => {
    let k = byInstance.get(pub)
    if (!k) byInstance.set(pub, (k = cached(pubs, pub, () => createPublicKey({ key: Buffer.concat([SPKI_PREFIX, pub]), format: 'der', type: 'spki' }))))
    return k
  }
  return {
    name: `node-${opts.verify}`,
    aead: nodeAead,
    // OpenSSL's SHA-256, one-shot: about 2 µs for a change against 3 µs through a Hash
    // object and noble's 7 µs (all measured here).
    sha256: (bytes) => {
      const d = hash('sha256', bytes, 'buffer')
      return new Uint8Array(d.buffer, d.byteOffset, d.byteLength)
    },
    async sign(privateKey, message) {
      return new Uint8Array(sign(null, message, privKey(privateKey)))
    },
    // On the pool, in parallel: a bulk create signs two changes an object, which inline took
    // about a seventh of the event loop's time (on the pool, another core does it). One at a
    // time inline (`sign`) stays the cheaper path for a single write: no pool round trip.
    ...(opts.verify === 'threadpool'
      ? {
          signMany(privateKey: Uint8Array, messages: readonly Uint8Array[]) {
            const key = privKey(privateKey)
            return Promise.all(
              messages.map((m) => new Promise<Uint8Array>((resolve, reject) => sign(null, m, key, (err, sig) => (err ? reject(err) : resolve(new Uint8Array(sig)))))),
            )
          },
        }
      : {}),
    // Not `async`: one promise per verify, not a second one wrapping it.
    verify(publicKey, message, signature) {
      if (publicKey.length !== 32 || signature.length !== 64) return Promise.resolve(false)
      let key: KeyObject
      try {
        key = pubKey(publicKey)
      } catch {
        return Promise.resolve(false)
      }
      if (opts.verify === 'sync') {
        try {
          return Promise.resolve(verify(null, message, key, signature))
        } catch {
          return Promise.resolve(false)
        }
      }
      return new Promise<boolean>((resolve) => {
        try {
          verify(null, message, key, signature, (err, ok) => resolve(!err && ok))
        } catch {
          resolve(false)
        }
      })
    },
  }
}

// "expand 32-byte k" as little-endian words: the ChaCha constant HChaCha20 starts from.
const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574])

const words = (b: Uint8Array): Uint32Array => {
  const copy = new Uint8Array(b) // aligned, and independent of the caller's buffer
  return new Uint32Array(copy.buffer, 0, copy.length / 4)
}

// A space's read key is one Uint8Array opening every change sealed under it. Keys are never
// mutated in place (the keyring hands out the same bytes), so the words can be kept per instance.
const keyWords = new WeakMap<Uint8Array, Uint32Array>()

/**
 * XChaCha20-Poly1305 as libsodium builds it (draft-irtf-cfrg-xchacha): a subkey from
 * HChaCha20(key, nonce[0..16]), then IETF ChaCha20-Poly1305 with nonce 0^4 || nonce[16..24].
 * Byte-identical to @noble/ciphers' xchacha20poly1305 (test/node/node-crypto.test.ts checks).
 */
// Scratch for one call at a time (JS is single-threaded and OpenSSL copies key and iv when a
// cipher is created), so opening a payload allocates nothing here.
const nonceWords = new Uint32Array(4)
const subkeyWords = new Uint32Array(8)
const subkey = Buffer.from(subkeyWords.buffer)
const iv = Buffer.alloc(12)

function subkeyAndNonce(key: Uint8Array, nonce: Uint8Array): [Buffer, Buffer] {
  if (key.length !== 32 || nonce.length !== 24) throw new Error('xchacha20poly1305: bad key or nonce length')
  let kw = keyWords.get(key)
  if (!kw) keyWords.set(key, (kw = words(key)))
  // HChaCha20 takes the nonce as little-endian words, as `words` gives them on x86 and ARM.
  for (let i = 0; i < 4; i++) nonceWords[i] = nonce[4 * i] | (nonce[4 * i + 1] << 8) | (nonce[4 * i + 2] << 16) | (nonce[4 * i + 3] << 24)
  hchacha(SIGMA, kw, nonceWords, subkeyWords)
  iv.set(nonce.subarray(16, 24), 4)
  return [subkey, iv]
}

export const nodeAead: Aead = {
  name: 'node',
  seal(key, nonce, plaintext, aad) {
    const [sub, iv] = subkeyAndNonce(key, nonce)
    const c = createCipheriv('chacha20-poly1305', sub, iv, { authTagLength: TAG_BYTES })
    if (aad) c.setAAD(aad, { plaintextLength: plaintext.length })
    const head = c.update(plaintext)
    const tail = c.final()
    const out = new Uint8Array(head.length + tail.length + TAG_BYTES)
    out.set(head)
    out.set(tail, head.length)
    out.set(c.getAuthTag(), head.length + tail.length)
    return out
  },
  sealInto(key, nonce, plaintext, aad, dst) {
    if (dst.length < plaintext.length + TAG_BYTES) throw new Error('xchacha20poly1305: no room for the ciphertext')
    const [sub, iv] = subkeyAndNonce(key, nonce)
    const c = createCipheriv('chacha20-poly1305', sub, iv, { authTagLength: TAG_BYTES })
    if (aad) c.setAAD(aad, { plaintextLength: plaintext.length })
    // update reads the whole plaintext before anything is written to dst (which may overlap it).
    const head = c.update(plaintext)
    const tail = c.final()
    dst.set(head)
    dst.set(tail, head.length)
    dst.set(c.getAuthTag(), head.length + tail.length)
    return head.length + tail.length + TAG_BYTES
  },
  open(key, nonce, ciphertext, aad) {
    if (ciphertext.length < TAG_BYTES) throw new Error('xchacha20poly1305: ciphertext too short')
    const [sub, iv] = subkeyAndNonce(key, nonce)
    const d = createDecipheriv('chacha20-poly1305', sub, iv, { authTagLength: TAG_BYTES })
    d.setAuthTag(ciphertext.subarray(ciphertext.length - TAG_BYTES))
    if (aad) d.setAAD(aad, { plaintextLength: ciphertext.length - TAG_BYTES })
    const head = d.update(ciphertext.subarray(0, ciphertext.length - TAG_BYTES))
    const tail = d.final() // throws on a bad tag
    if (tail.length === 0) return new Uint8Array(head.buffer, head.byteOffset, head.byteLength)
    const out = new Uint8Array(head.length + tail.length)
    out.set(head)
    out.set(tail, head.length)
    return out
  },
}
