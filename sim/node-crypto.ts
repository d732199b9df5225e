/**
 * Node-only: imported by the CLI and the tests, never by the runner (sim/ otherwise runs on
 * sync/ alone). A CryptoProvider on node:crypto's synchronous Ed25519: the same signatures as
 * WebCrypto and noble (Ed25519 is deterministic), without a thread-pool round trip per call,
 * which a simulator that runs one event at a time would otherwise spend idle.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import type { CryptoProvider } from '../sync/crypto/provider.ts'

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

export function nodeSyncCryptoProvider(): CryptoProvider {
  const privs = new Map<string, KeyObject>()
  const pubs = new Map<string, KeyObject>()
  const cached = (m: Map<string, KeyObject>, raw: Uint8Array, make: () => KeyObject) => {
    const k = Buffer.from(raw).toString('latin1')
    let v = m.get(k)
    if (!v) {
      if (m.size > 4096) m.clear()
      m.set(k, (v = make()))
    }
    return v
  }
  return {
    name: 'node-sync',
    async sign(privateKey, message) {
      const key = cached(privs, privateKey, () => createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, privateKey]), format: 'der', type: 'pkcs8' }))
      return new Uint8Array(sign(null, message, key))
    },
    async verify(publicKey, message, signature) {
      if (publicKey.length !== 32 || signature.length !== 64) return false
      try {
        const key = cached(pubs, publicKey, () => createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' }))
        return verify(null, message, key, signature)
      } catch {
        return false
      }
    },
  }
}
