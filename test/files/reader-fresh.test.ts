import { describe, expect, it } from 'vitest'
import { nobleProvider } from '../../sync/crypto/provider.ts'
import { inlineBlockCrypto } from '../../sync/modules/files/block-crypto.ts'
import { filesSecret, sealBlock } from '../../sync/modules/files/blocks.ts'
import type { BlockSource } from '../../sync/modules/files/network.ts'
import { BlockReader } from '../../sync/modules/files/reader.ts'
import type { FileRecord } from '../../sync/modules/files/record.ts'
import { KvBlockStore } from '../../sync/storage/block-store.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'

/*
 * The reader keeps blocks a download just fetched in memory, so it opens them without reading
 * back what it wrote. Only a download keeps them, and only while it runs: a pin's fetch keeps
 * nothing, and a download that ends, or is cut off, drops what it did not read. The peer
 * delivering blocks is a map here (the network half is node/files, tested end to end).
 */

const BLOCK = 1000
const N = 40
const secret = filesSecret(new Uint8Array(32).fill(4))
const plain = new Uint8Array(BLOCK * N).map((_, i) => (i * 13) & 255)
const sealed = Array.from({ length: N }, (_, i) => sealBlock(secret, plain.subarray(i * BLOCK, (i + 1) * BLOCK), nobleProvider.aead))
const rec: FileRecord = {
  id: 'f',
  objectId: 'o',
  name: 'f.bin',
  mime: 'application/octet-stream',
  size: plain.length,
  creator: 'me',
  createdAt: { $date: '2026-11-27T00:00:00.000Z' },
  hash: 'h',
  blockSize: BLOCK,
  blocks: sealed.map((b) => b.id),
  keys: sealed.map((b) => b.key),
}
const peer: BlockSource = {
  async fetch(_spaceId, ids, onBlock) {
    for (const id of ids) await onBlock(id, sealed.find((b) => b.id === id)!.bytes.slice())
    return []
  },
  async confirm() {
    return undefined
  },
}

const fresh = (r: BlockReader) => (r as unknown as { fresh: Map<string, Uint8Array> }).fresh.size
const newReader = () => {
  const r = new BlockReader(new KvBlockStore(new MemoryStorageAdapter()), inlineBlockCrypto(nobleProvider))
  r.source = peer
  return r
}

describe('blocks a download just fetched', () => {
  it('a fetch that is not a download (a pin) keeps none in memory', async () => {
    const r = newReader()
    await r.ensure('s', rec, 0, N - 1)
    expect(fresh(r)).toBe(0)
  })

  it('a download reads the file byte for byte and keeps nothing once it ends', async () => {
    const r = newReader()
    const parts: Uint8Array[] = []
    for await (const p of await r.range('s', rec, 0, plain.length - 1)) parts.push(p.slice())
    expect(Buffer.concat(parts).equals(Buffer.from(plain))).toBe(true)
    expect(fresh(r)).toBe(0)
  })

  it('a download cut off after two blocks drops the blocks it fetched ahead', async () => {
    const r = newReader()
    const it = (await r.range('s', rec, 0, plain.length - 1))[Symbol.asyncIterator]()
    await it.next()
    await it.next()
    expect(fresh(r)).toBeGreaterThan(0)
    await it.return!(undefined)
    expect(fresh(r)).toBe(0)
  })
})
