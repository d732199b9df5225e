/**
 * Block operations every block store must carry: test-only, like conformance.ts. The adapter
 * form runs KvBlockStore on a storage adapter (memory, SQLite, IndexedDB; from
 * test/files/block-store.test.ts and the browser suite); the store form runs any BlockStore,
 * such as the daemon's files-on-disk store.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { KvBlockStore, type BlockStore } from './block-store.ts'
import type { StorageAdapterFixture } from './conformance.ts'

const block = (n: number, fill: number) => new Uint8Array(n).fill(fill)

export interface BlockStoreFixture {
  store: BlockStore
  /** Releases the store (and what it stands on). */
  close: () => Promise<void>
  /** A persistent store's second instance over the same data, after close. */
  reopen?: () => Promise<BlockStoreFixture>
  teardown?: () => Promise<void>
}

export function runBlockStoreConformance(name: string, setup: () => Promise<StorageAdapterFixture>): void {
  const wrap = (f: { adapter: StorageAdapterFixture['adapter']; reopen?: StorageAdapterFixture['reopen']; teardown?: StorageAdapterFixture['teardown'] }): BlockStoreFixture => {
    const reopen = f.reopen
    return {
      store: new KvBlockStore(f.adapter),
      close: () => f.adapter.close(),
      ...(reopen ? { reopen: async () => wrap({ adapter: await reopen() }) } : {}),
      ...(f.teardown ? { teardown: f.teardown } : {}),
    }
  }
  runBlockStoreSuite(name, async () => wrap(await setup()))
}

export function runBlockStoreSuite(name: string, setup: () => Promise<BlockStoreFixture>): void {
  describe(`BlockStore conformance: ${name}`, () => {
    const open: BlockStoreFixture[] = []
    let teardowns: Array<() => Promise<void>> = []
    const fixture = async () => {
      const f = await setup()
      open.push(f)
      if (f.teardown) teardowns.push(f.teardown)
      return f
    }
    afterEach(async () => {
      // A fixture a test closed closes again without error: one that fails here fails the test.
      for (const f of open.splice(0)) await f.close()
      for (const t of teardowns) await t()
      teardowns = []
    })

    it('keeps a 1 MiB block byte for byte and answers has per id', async () => {
      const { store } = await fixture()
      const big = new Uint8Array(1024 * 1024 + 16)
      for (let i = 0; i < big.length; i++) big[i] = (i * 31 + 7) & 255
      await store.put('s1', [
        { id: 'A', bytes: big },
        { id: 'B', bytes: block(10, 2) },
      ])
      const got = await store.get('s1', 'A')
      expect(got?.length).toBe(big.length)
      expect(Buffer.compare(Buffer.from(got!), Buffer.from(big))).toBe(0)
      expect(await store.has('s1', ['A', 'C', 'B'])).toEqual([true, false, true])
      expect(await store.get('s1', 'C')).toBeUndefined()
    })

    it("get answers the caller's own bytes: changing (or handing off) them leaves the block as stored", async () => {
      const { store } = await fixture()
      const bytes = block(5000, 3)
      await store.put('s1', [{ id: 'D', bytes }])
      bytes.fill(0)
      const first = (await store.get('s1', 'D'))!
      expect(Buffer.from(first).equals(Buffer.from(block(5000, 3)))).toBe(true)
      first.fill(9)
      expect(Buffer.from((await store.get('s1', 'D'))!).equals(Buffer.from(block(5000, 3)))).toBe(true)
    })

    it('keeps spaces apart: an id stored under one space is absent under another', async () => {
      const { store } = await fixture()
      await store.put('s1', [{ id: 'A', bytes: block(5, 1) }])
      expect(await store.get('s2', 'A')).toBeUndefined()
      expect(await store.has('s2', ['A'])).toEqual([false])
      expect(await store.list('s2')).toEqual([])
      expect(await store.list('s1')).toEqual([{ id: 'A', size: 5 }])
    })

    it('counts size once per block (a re-put of one id does not double it) and lists in id order', async () => {
      const { store } = await fixture()
      await store.put('s1', [
        { id: 'b', bytes: block(100, 1) },
        { id: 'a', bytes: block(50, 1) },
      ])
      await store.put('s1', [{ id: 'b', bytes: block(100, 1) }])
      await store.put('s2', [{ id: 'c', bytes: block(7, 1) }])
      expect(await store.size()).toBe(157)
      expect(await store.list('s1')).toEqual([
        { id: 'a', size: 50 },
        { id: 'b', size: 100 },
      ])
    })

    it('delete frees the bytes it removed and ignores absent ids', async () => {
      const { store } = await fixture()
      await store.put('s1', [
        { id: 'a', bytes: block(50, 1) },
        { id: 'b', bytes: block(70, 1) },
      ])
      expect(await store.delete('s1', ['a', 'zz'])).toBe(50)
      expect(await store.delete('s2', ['b'])).toBe(0)
      expect(await store.has('s1', ['a', 'b'])).toEqual([false, true])
      expect(await store.size()).toBe(70)
      expect(await store.delete('s1', [])).toBe(0)
    })

    it('blocks survive a reopen of a persistent adapter', async () => {
      const f = await fixture()
      if (!f.reopen) return
      await f.store.put('s1', [{ id: 'a', bytes: block(33, 9) }])
      await f.close()
      const again = await f.reopen()
      open.push(again)
      const store = again.store
      expect(await store.get('s1', 'a')).toEqual(block(33, 9))
      expect(await store.size()).toBe(33)
    })
  })
}
