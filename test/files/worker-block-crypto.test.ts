import { afterAll, describe, expect, it } from 'vitest'
import { nodeCryptoProvider } from '../../node/crypto/node-provider.ts'
import { WorkerBlockCrypto } from '../../node/files/worker-block-crypto.ts'
import { inlineBlockCrypto, type BlockCrypto } from '../../sync/modules/files/block-crypto.ts'
import { filesSecret, sealBlock } from '../../sync/modules/files/blocks.ts'
import { nobleProvider } from '../../sync/crypto/provider.ts'

/*
 * The daemon's block crypto thread (node/files/worker-block-crypto.ts) computes what the inline
 * block crypto computes, and keeps the BlockCrypto contract on buffers: inputs that are read are
 * copied as posted (the caller may reuse them at once), given ones come back whole, and a
 * buffer that cannot move (Node's pool of small Buffers) is copied instead of detached.
 */

const bytes = (n: number, seed = 1) => {
  const b = new Uint8Array(n)
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 255
  return b
}
/** Byte equality without vitest's element-by-element diff (slow on 100 KB). */
const same = (a: Uint8Array | undefined, b: Uint8Array) =>
  a !== undefined && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
const secret = filesSecret(bytes(32, 7))
const worker = new WorkerBlockCrypto()
afterAll(() => worker.close())

describe('block crypto on a thread', () => {
  const kinds: Array<[string, BlockCrypto]> = [
    ['inline (noble)', inlineBlockCrypto(nobleProvider)],
    ['inline (node)', inlineBlockCrypto(nodeCryptoProvider({ verify: 'sync' }))],
    ['worker', worker],
  ]
  const expected = sealBlock(secret, bytes(100_000), nobleProvider.aead)

  for (const [name, bc] of kinds) {
    it(`${name}: seals, checks and opens byte for byte like blocks.ts`, async () => {
      const plain = bytes(100_000)
      const sealing = bc.seal(secret, plain)
      // Read before the call returned: reusing the buffer now changes nothing.
      plain.fill(0)
      const b = await sealing
      expect(b.id).toBe(expected.id)
      expect(b.key).toEqual(expected.key)
      expect(same(b.bytes, expected.bytes)).toBe(true)
      expect(same(await bc.isBlock(expected.id, expected.bytes.slice()), expected.bytes)).toBe(true)
      const flipped = expected.bytes.slice()
      flipped[10] ^= 1
      expect(await bc.isBlock(expected.id, flipped)).toBeUndefined()
      expect(same(await bc.open(expected.key, expected.bytes), bytes(100_000))).toBe(true)
      expect(same(await bc.open(expected.key, expected.bytes.slice(), true), bytes(100_000))).toBe(true)
      await expect(bc.open(bytes(32, 9), expected.bytes)).rejects.toThrow()
    })
  }

  it('a given view into a larger buffer comes back as the same view (a block inside a received frame)', async () => {
    const frame = new Uint8Array(expected.bytes.length + 40)
    frame.set(expected.bytes, 25)
    const view = frame.subarray(25, 25 + expected.bytes.length)
    const back = await worker.isBlock(expected.id, view)
    expect(back).toBeDefined()
    expect(back!.byteOffset).toBe(25)
    expect(same(back, expected.bytes)).toBe(true)
  })

  it("a small Buffer from Node's shared pool is copied, not moved: the pool stays readable", async () => {
    const small = sealBlock(secret, bytes(100), nobleProvider.aead)
    const pooled = Buffer.from(small.bytes)
    const neighbour = Buffer.from('still here')
    expect(pooled.buffer).toBe(neighbour.buffer)
    expect(await worker.isBlock(small.id, pooled)).toEqual(new Uint8Array(small.bytes))
    expect(await worker.open(small.key, pooled, true)).toEqual(bytes(100))
    expect(neighbour.toString()).toBe('still here')
  })

  it('a stopped thread fails nothing later: the next call starts another', async () => {
    await worker.close()
    const b = await worker.seal(secret, bytes(1000))
    expect(b.id).toBe(sealBlock(secret, bytes(1000), nobleProvider.aead).id)
  })
})
