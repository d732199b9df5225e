/**
 * Block operations every storage adapter must carry (files' blocks through KvBlockStore):
 * test-only, like conformance.ts. Run per adapter from test/files/block-store.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { StorageAdapter } from './adapter.ts'
import { KvBlockStore } from './block-store.ts'
import type { StorageAdapterFixture } from './conformance.ts'

const block = (n: number, fill: number) => new Uint8Array(n).fill(fill)

export function runBlockStoreConformance(name: string, setup: () => Promise<StorageAdapterFixture>): void {
  describe(`BlockStore conformance: ${name}`, () => {
    const open: StorageAdapter[] = []
    let teardowns: Array<() => Promise<void>> = []
    const fixture = async () => {
      const f = await setup()
      open.push(f.adapter)
      if (f.teardown) teardowns.push(f.teardown)
      return f
    }
    afterEach(async () => {
      for (const a of open.splice(0)) await a.close().catch(() => undefined)
      for (const t of teardowns) await t()
      teardowns = []
    })

    it('keeps a 1 MiB block byte for byte and answers has per id', async () => {
      const { adapter } = await fixture()
      const store = new KvBlockStore(adapter)
      const big = new Uint8Array(1024 * 1024 + 16)
      for (let i = 0; i < big.length; i++) big[i] = (i * 31 + 7) & 255
      await store.put('s1', [{ id: 'A', bytes: big }, { id: 'B', bytes: block(10, 2) }])
      const got = await store.get('s1', 'A')
      expect(got?.length).toBe(big.length)
      expect(Buffer.compare(Buffer.from(got!), Buffer.from(big))).toBe(0)
      expect(await store.has('s1', ['A', 'C', 'B'])).toEqual([true, false, true])
      expect(await store.get('s1', 'C')).toBeUndefined()
    })

    it('keeps spaces apart: an id stored under one space is absent under another', async () => {
      const { adapter } = await fixture()
      const store = new KvBlockStore(adapter)
      await store.put('s1', [{ id: 'A', bytes: block(5, 1) }])
      expect(await store.get('s2', 'A')).toBeUndefined()
      expect(await store.has('s2', ['A'])).toEqual([false])
      expect(await store.list('s2')).toEqual([])
      expect(await store.list('s1')).toEqual([{ id: 'A', size: 5 }])
    })

    it('counts size once per block (a re-put of one id does not double it) and lists in id order', async () => {
      const { adapter } = await fixture()
      const store = new KvBlockStore(adapter)
      await store.put('s1', [{ id: 'b', bytes: block(100, 1) }, { id: 'a', bytes: block(50, 1) }])
      await store.put('s1', [{ id: 'b', bytes: block(100, 1) }])
      await store.put('s2', [{ id: 'c', bytes: block(7, 1) }])
      expect(await store.size()).toBe(157)
      expect(await store.list('s1')).toEqual([{ id: 'a', size: 50 }, { id: 'b', size: 100 }])
    })

    it('delete frees the bytes it removed and ignores absent ids', async () => {
      const { adapter } = await fixture()
      const store = new KvBlockStore(adapter)
      await store.put('s1', [{ id: 'a', bytes: block(50, 1) }, { id: 'b', bytes: block(70, 1) }])
      expect(await store.delete('s1', ['a', 'zz'])).toBe(50)
      expect(await store.delete('s2', ['b'])).toBe(0)
      expect(await store.has('s1', ['a', 'b'])).toEqual([false, true])
      expect(await store.size()).toBe(70)
      expect(await store.delete('s1', [])).toBe(0)
    })

    it('blocks survive a reopen of a persistent adapter', async () => {
      const f = await fixture()
      if (!f.reopen) return
      await new KvBlockStore(f.adapter).put('s1', [{ id: 'a', bytes: block(33, 9) }])
      await f.adapter.close()
      const again = await f.reopen()
      open.push(again)
      const store = new KvBlockStore(again)
      expect(await store.get('s1', 'a')).toEqual(block(33, 9))
      expect(await store.size()).toBe(33)
    })
  })
}
