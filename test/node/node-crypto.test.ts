import { describe, expect, it } from 'vitest'
import { ed25519 } from '@noble/curves/ed25519.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { nobleAead } from '../../sync/crypto/aead.ts'
import { nodeAead, nodeCryptoProvider } from '../../node/crypto/node-provider.ts'
import { nobleProvider } from '../../sync/crypto/provider.ts'
import { xorshiftBytes } from '../../sync/core/xorshift.ts'
import { keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { signChange, signChanges } from '../../sync/dag/change.ts'

describe('node:crypto provider', () => {
  const bytes = xorshiftBytes(0x5eed)

  it('XChaCha20-Poly1305 is byte-identical to noble both ways, with and without AAD', () => {
    for (let i = 0; i < 200; i++) {
      const key = bytes(32)
      const nonce = bytes(24)
      const pt = bytes(i * 7)
      const aad = i % 3 === 0 ? bytes(i % 40) : undefined
      const sealed = nodeAead.seal(key, nonce, pt, aad)
      expect(sealed).toEqual(nobleAead.seal(key, nonce, pt, aad))
      expect(nodeAead.open(key, nonce, sealed, aad)).toEqual(pt)
      expect(nobleAead.open(key, nonce, sealed, aad)).toEqual(pt)
    }
  })

  it('refuses a flipped byte, a wrong key, a wrong nonce, wrong AAD and a short input', () => {
    const key = bytes(32)
    const nonce = bytes(24)
    const sealed = nodeAead.seal(key, nonce, bytes(100), bytes(5))
    const flipped = sealed.slice()
    flipped[10] ^= 1
    expect(() => nodeAead.open(key, nonce, flipped, undefined)).toThrow()
    expect(() => nodeAead.open(bytes(32), nonce, sealed, undefined)).toThrow()
    expect(() => nodeAead.open(key, bytes(24), sealed, undefined)).toThrow()
    expect(() => nodeAead.open(key, nonce, sealed, bytes(5))).toThrow()
    expect(() => nodeAead.open(key, nonce, sealed.subarray(0, 10))).toThrow()
    expect(() => nodeAead.seal(bytes(31), nonce, bytes(1))).toThrow()
  })

  it('SHA-256 equals noble, so change ids agree on every provider', () => {
    const p = nodeCryptoProvider()
    for (const n of [0, 1, 55, 64, 1000]) {
      const b = bytes(n)
      expect(p.sha256!(b)).toEqual(sha256(b))
    }
  })

  for (const mode of ['sync', 'threadpool'] as const) {
    it(`${mode}: signatures equal noble's, verify accepts good and refuses forged ones`, async () => {
      const p = nodeCryptoProvider({ verify: mode })
      const seed = bytes(32)
      const pub = ed25519.getPublicKey(seed)
      const msg = bytes(300)
      const sig = await p.sign(seed, msg)
      expect(sig).toEqual(await nobleProvider.sign(seed, msg))
      expect(await p.verify(pub, msg, sig)).toBe(true)
      const bad = sig.slice()
      bad[3] ^= 0x40
      expect(await p.verify(pub, msg, bad)).toBe(false)
      expect(await p.verify(pub, bytes(300), sig)).toBe(false)
      expect(await p.verify(ed25519.getPublicKey(bytes(32)), msg, sig)).toBe(false)
      expect(await p.verify(pub.subarray(0, 31), msg, sig)).toBe(false)
      expect(await p.verify(pub, msg, sig.subarray(0, 63))).toBe(false)
      // Not a point on the curve: must be a refusal, not a throw.
      expect(await p.verify(new Uint8Array(32).fill(0xff), msg, sig)).toBe(false)
    })
  }

  it('threadpool: signMany gives, in order, the signatures sign gives; signChanges the changes signChange makes', async () => {
    const p = nodeCryptoProvider({ verify: 'threadpool' })
    expect(nodeCryptoProvider({ verify: 'sync' }).signMany).toBeUndefined()
    const seed = bytes(32)
    const msgs = Array.from({ length: 40 }, (_, i) => bytes(10 + i * 13))
    const many = await p.signMany!(seed, msgs)
    for (let i = 0; i < msgs.length; i++) expect(many[i]).toEqual(await nobleProvider.sign(seed, msgs[i]))
    const key = keyPairFromSeed(seed)
    const headers = msgs.map((payload, i) => ({ spaceId: 'S1', treeId: '', prevIds: [], aclHeadId: 'A1', seq: i + 1, lamport: 0, timestamp: 1_000 + i, readKeyId: '', payload }))
    const changes = await signChanges(p, key, headers)
    for (let i = 0; i < headers.length; i++) {
      const one = await signChange(p, key, headers[i])
      expect([changes[i].id, changes[i].raw]).toEqual([one.id, one.raw])
    }
  })
})
