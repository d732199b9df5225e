import { describe, expect, it } from 'vitest'
import { ed25519 } from '@noble/curves/ed25519.js'
import { accountKeyFromMnemonic, identityOf, isValidMnemonic, newMnemonic, slip10Ed25519, keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { decodeWallet, encodeWallet, walletNeedsPasskey } from '../../sync/crypto/wallet.ts'
import { wrapKeyTo, unwrapKey } from '../../sync/crypto/wrap.ts'
import { seal, open } from '../../sync/crypto/box.ts'
import { defaultCryptoProvider, nobleProvider } from '../../sync/crypto/provider.ts'
import { propertyIdFor } from '../../sync/crypto/hash.ts'
import { toHex } from '../../sync/core/encoding.ts'
import { seededEnv } from '../helpers.ts'

const hex = (s: string) => Uint8Array.from(s.match(/../g)!.map((b) => parseInt(b, 16)))

describe('keys', () => {
  it('SLIP-0010 Ed25519 matches the published test vector 1', () => {
    const seed = hex('000102030405060708090a0b0c0d0e0f')
    expect(toHex(slip10Ed25519(seed, []))).toBe('2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7')
    expect(toHex(slip10Ed25519(seed, [0]))).toBe('68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3')
    expect(toHex(slip10Ed25519(seed, [0, 1]))).toBe('b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2')
  })

  it('a mnemonic gives the same account key on every device, a different one per index', () => {
    const m = newMnemonic(seededEnv(3))
    expect(m.split(' ')).toHaveLength(12)
    expect(isValidMnemonic(m)).toBe(true)
    const a = accountKeyFromMnemonic(m)
    expect(identityOf(accountKeyFromMnemonic(`  ${m.toUpperCase()} `).publicKey)).toBe(identityOf(a.publicKey))
    expect(identityOf(accountKeyFromMnemonic(m, 1).publicKey)).toBe(identityOf(a.publicKey))
    expect(identityOf(accountKeyFromMnemonic(m, 2).publicKey)).not.toBe(identityOf(a.publicKey))
    expect(() => accountKeyFromMnemonic('abandon abandon')).toThrow(expect.objectContaining({ code: 'auth.bad_mnemonic' }))
  })
})

describe('wallet key file', () => {
  const keys = { account: keyPairFromSeed(new Uint8Array(32).fill(1)), device: keyPairFromSeed(new Uint8Array(32).fill(2)), index: 1 }
  const fast = { N: 1024, r: 8, p: 1 }

  it('round-trips in the clear and under a passkey, and refuses a wrong or missing passkey', () => {
    const plain = encodeWallet(seededEnv(1), keys)
    expect(walletNeedsPasskey(plain)).toBe(false)
    expect(decodeWallet(plain).account.publicKey).toEqual(keys.account.publicKey)
    const locked = encodeWallet(seededEnv(1), keys, 'hunter2', fast)
    expect(walletNeedsPasskey(locked)).toBe(true)
    expect(locked).not.toContain(btoa(String.fromCharCode(...keys.account.privateKey)))
    expect(decodeWallet(locked, 'hunter2').device.privateKey).toEqual(keys.device.privateKey)
    expect(() => decodeWallet(locked)).toThrow(expect.objectContaining({ code: 'auth.passkey_required' }))
    expect(() => decodeWallet(locked, 'wrong')).toThrow(expect.objectContaining({ code: 'auth.passkey_required' }))
    expect(() => decodeWallet('{"format":"nope"}')).toThrow(expect.objectContaining({ code: 'auth.device_key_corrupt' }))
  })
})

describe('sealing and wrapping', () => {
  it('XChaCha20-Poly1305 detects tampering; a wrapped key opens only for its recipient', () => {
    const env = seededEnv(4)
    const key = env.randomBytes(32)
    const box = seal(env, key, new Uint8Array([1, 2, 3]))
    expect(open(key, box)).toEqual(new Uint8Array([1, 2, 3]))
    box[box.length - 1] ^= 1
    expect(() => open(key, box)).toThrow(expect.objectContaining({ code: 'crypto.decrypt_failed' }))
    const alice = keyPairFromSeed(new Uint8Array(32).fill(5))
    const bob = keyPairFromSeed(new Uint8Array(32).fill(6))
    const wrapped = wrapKeyTo(env, alice.publicKey, key)
    expect(unwrapKey(alice.privateKey, wrapped)).toEqual(key)
    expect(() => unwrapKey(bob.privateKey, wrapped)).toThrow()
  })
})

describe('crypto provider', () => {
  it('the native provider and noble agree on signatures both ways', async () => {
    const native = await defaultCryptoProvider()
    const k = keyPairFromSeed(new Uint8Array(32).fill(9))
    const msg = new Uint8Array([7, 7, 7])
    const s1 = await native.sign(k.privateKey, msg)
    const s2 = await nobleProvider.sign(k.privateKey, msg)
    expect(s1).toEqual(s2) // Ed25519 is deterministic
    expect(await nobleProvider.verify(k.publicKey, msg, s1)).toBe(true)
    expect(await native.verify(k.publicKey, msg, s2)).toBe(true)
    expect(ed25519.verify(s1, msg, k.publicKey)).toBe(true)
    const bad = s1.slice()
    bad[0] ^= 1
    expect(await native.verify(k.publicKey, msg, bad)).toBe(false)
    expect(await native.verify(k.publicKey, msg, new Uint8Array(3))).toBe(false)
  })
})

describe('property ids', () => {
  it('are base58 of xxh3-64 of the creating change id, at most 11 chars, stable', async () => {
    const id = await propertyIdFor('8cGh2r1m3QyUe1yVZ8z4d6k2VvK9Wd4xY6n7a8b9c1dE')
    expect(id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{1,11}$/)
    expect(await propertyIdFor('8cGh2r1m3QyUe1yVZ8z4d6k2VvK9Wd4xY6n7a8b9c1dE')).toBe(id)
    expect(await propertyIdFor('other')).not.toBe(id)
  })
})
