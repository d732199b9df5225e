/**
 * Conformance suite every StorageAdapter must pass (modeled on automerge-repo's
 * runStorageAdapterTests). Test-only: it imports vitest, so it is not re-exported from index.ts.
 *
 * Usage, in a test file:
 *   runStorageAdapterConformance('sqlite', async () => ({ adapter, reopen, teardown }))
 *
 * `setup` runs before every test and must return an empty adapter. `reopen`, when given, opens
 * a new adapter on the same underlying data (the suite closes the previous one first); the
 * persistence tests run only for adapters registered with `{ persistent: true }` (the default). The suite closes every adapter it saw, then calls
 * `teardown`.
 *
 * Key order: the spec orders keys by UTF-8 bytes. IndexedDB orders by UTF-16 code units, which
 * differs only between non-BMP characters and U+E000..U+FFFF, so the suite never compares the
 * order of two such keys (svc never writes keys where it matters).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { ScanOptions, StorageAdapter, WriteBatch } from './adapter.ts'
import { pattern } from '../core/xorshift.ts'

export interface StorageAdapterFixture {
  adapter: StorageAdapter
  reopen?: () => Promise<StorageAdapter>
  teardown?: () => Promise<void>
}

const enc = new TextEncoder()
const text = (s: string) => enc.encode(s)
const bytes = (...xs: number[]) => new Uint8Array(xs)
const keysOf = (entries: Array<[string, Uint8Array]>) => entries.map(([k]) => k)

/** Byte equality without a per-element matcher diff (fast for 1 MB values). */
function sameBytes(x: Uint8Array | undefined, y: Uint8Array): boolean {
  if (!x || x.length !== y.length) return false
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
  return true
}

/** Fisher-Yates with a fixed seed, so insertion order is scrambled but reproducible. */
function shuffled<T>(xs: readonly T[], seed = 7): T[] {
  const out = [...xs]
  let x = seed
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    const j = x % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

/** Code unit order; equals UTF-8 byte order for the keys the suite compares. */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Reference scan: filter everything, sort, then reverse and limit. */
function referenceScan(keys: Iterable<string>, o: ScanOptions): string[] {
  let out = [...keys].filter((k) => (!o.prefix || k.startsWith(o.prefix)) && (o.gt === undefined || cmp(k, o.gt) > 0) && (o.lt === undefined || cmp(k, o.lt) < 0)).sort(cmp)
  if (o.reverse) out.reverse()
  if (o.limit !== undefined) out = out.slice(0, Math.max(0, o.limit))
  return out
}

export function runStorageAdapterConformance(name: string, setup: () => Promise<StorageAdapterFixture>, options: { persistent?: boolean } = { persistent: true }): void {
  describe(`StorageAdapter conformance: ${name}`, () => {
    let fixture: StorageAdapterFixture
    let seen: StorageAdapter[]
    let a: StorageAdapter

    beforeEach(async () => {
      fixture = await setup()
      a = fixture.adapter
      seen = [a]
    })

    afterEach(async () => {
      // Closing is idempotent (see "close twice"): a close that fails here fails the test.
      for (const s of seen) await s.close()
      await fixture.teardown?.()
    })

    /** Closes the current adapter and reopens the same data. */
    async function reopen(): Promise<StorageAdapter> {
      await a.close()
      a = await fixture.reopen!()
      seen.push(a)
      return a
    }

    const put = (store: string, entries: Array<[string, Uint8Array]>) => a.commit({ puts: entries.map(([key, value]) => ({ store, key, value })), dels: [] })
    /** Puts every key with its UTF-8 encoding as value, in scrambled order. */
    const fill = (store: string, keys: readonly string[]) =>
      put(
        store,
        shuffled(keys).map((k): [string, Uint8Array] => [k, text(k)]),
      )
    const del = (store: string, keys: string[]) => a.commit({ puts: [], dels: keys.map((key) => ({ store, key })) })
    const scanKeys = async (store: string, o?: ScanOptions) => keysOf(await a.scan(store, o))

    it('has a name', () => {
      expect(typeof a.name).toBe('string')
      expect(a.name.length).toBeGreaterThan(0)
    })

    describe('get / getMany', () => {
      it('returns undefined for a missing key, in a used store and an unknown one', async () => {
        expect(await a.get('s', 'missing')).toBeUndefined()
        await put('s', [['k', bytes(1)]])
        expect(await a.get('s', 'missing')).toBeUndefined()
        expect(await a.get('s', 'k\u0000')).toBeUndefined()
        expect(await a.get('s', 'K')).toBeUndefined()
        expect(await a.get('other', 'k')).toBeUndefined()
      })

      it('round-trips binary values: small, empty, every byte, 1 MB', async () => {
        const every = new Uint8Array(256).map((_, i) => i)
        const big = pattern(1 << 20)
        await put('s', [
          ['small', bytes(1, 2, 3)],
          ['empty', new Uint8Array(0)],
          ['zero', bytes(0)],
          ['every', every],
          ['big', big],
        ])
        expect(await a.get('s', 'small')).toEqual(bytes(1, 2, 3))
        const empty = await a.get('s', 'empty')
        expect(empty).toBeInstanceOf(Uint8Array)
        expect(empty!.length).toBe(0)
        expect(await a.get('s', 'zero')).toEqual(bytes(0))
        expect(await a.get('s', 'every')).toEqual(every)
        expect(sameBytes(await a.get('s', 'big'), big)).toBe(true)
      })

      it('returns plain Uint8Arrays', async () => {
        await put('s', [['k', bytes(1, 2)]])
        const results = [await a.get('s', 'k'), (await a.getMany('s', ['k']))[0], (await a.scan('s'))[0][1]]
        for (const v of results) expect(Object.getPrototypeOf(v)).toBe(Uint8Array.prototype)
      })

      it('stores exactly the bytes of a view, not its whole buffer', async () => {
        const backing = pattern(4096, 3)
        await put('s', [['view', backing.subarray(100, 110)]])
        const got = await a.get('s', 'view')
        expect(got).toEqual(backing.slice(100, 110))
        expect(got!.length).toBe(10)
      })

      it('getMany returns values in request order with undefined for missing keys', async () => {
        await put('s', [
          ['a', bytes(1)],
          ['b', bytes(2)],
          ['c', bytes(3)],
        ])
        expect(await a.getMany('s', ['c', 'missing', 'a', 'c', 'b'])).toEqual([bytes(3), undefined, bytes(1), bytes(3), bytes(2)])
        expect(await a.getMany('s', [])).toEqual([])
        expect(await a.getMany('unknown', ['a', 'b'])).toEqual([undefined, undefined])
      })

      it('getMany handles a thousand keys', async () => {
        const keys = Array.from({ length: 1000 }, (_, i) => `k${i}`)
        await fill(
          's',
          keys.filter((_, i) => i % 2 === 0),
        )
        const got = await a.getMany('s', keys)
        expect(got.length).toBe(1000)
        got.forEach((v, i) => expect(v).toEqual(i % 2 === 0 ? text(keys[i]) : undefined))
      })

      it('getMany answers a shuffled request with repeats in request order', async () => {
        const stored = Array.from({ length: 600 }, (_, i) => `r${(i * 7919) % 600}`)
        await fill('s', stored)
        const asked = shuffled([...stored, ...stored.slice(0, 100), ...Array.from({ length: 100 }, (_, i) => `none${i}`)])
        const got = await a.getMany('s', asked)
        asked.forEach((k, i) => expect(got[i], k).toEqual(k.startsWith('none') ? undefined : text(k)))
      })

      it('getMany gives each repeat of a key bytes of its own, in large requests too', async () => {
        const keys = Array.from({ length: 200 }, (_, i) => `q${i}`)
        await fill('s', keys)
        const got = await a.getMany('s', [...keys, ...keys])
        got[0]![0] = 0
        expect(got[200]).toEqual(text('q0'))
        expect(await a.get('s', 'q0')).toEqual(text('q0'))
      })

      it('is isolated from callers mutating their buffers or the results', async () => {
        const v = bytes(1, 2, 3)
        await put('s', [['k', v]])
        v[0] = 9
        expect(await a.get('s', 'k')).toEqual(bytes(1, 2, 3))
        const got = (await a.get('s', 'k'))!
        got[1] = 9
        ;(await a.getMany('s', ['k']))[0]![2] = 9
        ;(await a.scan('s'))[0][1][0] = 9
        expect(await a.get('s', 'k')).toEqual(bytes(1, 2, 3))
      })
    })

    describe('commit', () => {
      it('overwrites a value, including with a shorter or empty one', async () => {
        await put('s', [['k', pattern(1000)]])
        await put('s', [['k', bytes(7)]])
        expect(await a.get('s', 'k')).toEqual(bytes(7))
        await put('s', [['k', new Uint8Array(0)]])
        expect((await a.get('s', 'k'))!.length).toBe(0)
        expect(await scanKeys('s')).toEqual(['k'])
      })

      it('deletes keys; deleting a missing key or store is a no-op', async () => {
        await fill('s', ['a', 'b', 'c'])
        await del('s', ['b'])
        expect(await a.get('s', 'b')).toBeUndefined()
        expect(await scanKeys('s')).toEqual(['a', 'c'])
        await del('s', ['b', 'missing'])
        await del('unknown', ['a'])
        expect(await scanKeys('s')).toEqual(['a', 'c'])
        await del('s', ['a', 'c'])
        expect(await a.scan('s')).toEqual([])
        await put('s', [['b', bytes(5)]])
        expect(await a.get('s', 'b')).toEqual(bytes(5))
      })

      it('accepts an empty batch', async () => {
        await a.commit({ puts: [], dels: [] })
        expect(await a.scan('s')).toEqual([])
      })

      it('applies the puts and deletes of one batch together, across stores', async () => {
        await fill('s', ['old1', 'old2'])
        await a.commit({
          puts: [
            { store: 's', key: 'new', value: bytes(1) },
            { store: 't', key: 'new', value: bytes(2) },
            { store: 's', key: 'old1', value: bytes(3) },
          ],
          dels: [
            { store: 's', key: 'old2' },
            { store: 't', key: 'missing' },
          ],
        })
        expect(await a.scan('s')).toEqual([
          ['new', bytes(1)],
          ['old1', bytes(3)],
        ])
        expect(await a.scan('t')).toEqual([['new', bytes(2)]])
      })

      it('within a batch, the last put of a key wins and deletes apply after puts', async () => {
        await a.commit({
          puts: [
            { store: 's', key: 'dup', value: bytes(1) },
            { store: 's', key: 'gone', value: bytes(2) },
            { store: 's', key: 'dup', value: bytes(3) },
          ],
          dels: [{ store: 's', key: 'gone' }],
        })
        expect(await a.scan('s')).toEqual([['dup', bytes(3)]])
      })

      it('later commits win, even when not awaited in between', async () => {
        await put('s', [['k', bytes(0)]])
        await put('s', [['k', bytes(1)]])
        expect(await a.get('s', 'k')).toEqual(bytes(1))
        const pending: Promise<unknown>[] = []
        for (let i = 2; i <= 20; i++) pending.push(put('s', [['k', bytes(i)]]))
        pending.push(a.commit({ puts: [], dels: [{ store: 's', key: 'gone' }] }))
        // Reads issued after un-awaited commits observe them.
        const read = a.get('s', 'k')
        await Promise.all(pending)
        expect(await read).toEqual(bytes(20))
        expect(await a.get('s', 'k')).toEqual(bytes(20))
      })

      it('reads the batch when commit is called', async () => {
        for (let round = 0; round < 2; round++) {
          const value = bytes(1, 2, 3)
          const batch: WriteBatch = { puts: [{ store: 's', key: `k${round}`, value }], dels: [] }
          const done = a.commit(batch)
          value[0] = 9
          batch.puts.push({ store: 's', key: `late${round}`, value: bytes(1) })
          await done
          expect(await a.get('s', `k${round}`)).toEqual(bytes(1, 2, 3))
          expect(await a.get('s', `late${round}`)).toBeUndefined()
        }
      })

      it('rejects an invalid batch as a whole and stays usable', async () => {
        await put('s', [
          ['a', bytes(1)],
          ['b', bytes(2)],
        ])
        const before = { s: await a.scan('s'), t: await a.scan('t') }
        const valid = {
          puts: [
            { store: 's', key: 'a', value: bytes(10) },
            { store: 's', key: 'new', value: bytes(11) },
            { store: 't', key: 'new', value: bytes(12) },
          ],
          dels: [{ store: 's', key: 'b' }],
        }
        const invalid: Array<{ why: string; batch: WriteBatch }> = [
          {
            why: 'value is a string',
            batch: { ...valid, puts: [...valid.puts, { store: 's', key: 'x', value: 'nope' as never }] },
          },
          {
            why: 'value is a plain array',
            batch: { ...valid, puts: [...valid.puts, { store: 's', key: 'x', value: [1, 2] as never }] },
          },
          {
            why: 'value is missing',
            batch: { ...valid, puts: [...valid.puts, { store: 's', key: 'x', value: undefined as never }] },
          },
          {
            why: 'key is a number',
            batch: { ...valid, puts: [...valid.puts, { store: 's', key: 1 as never, value: bytes(1) }] },
          },
          {
            why: 'key has a lone surrogate',
            batch: { ...valid, puts: [...valid.puts, { store: 's', key: 'x\ud800', value: bytes(1) }] },
          },
          {
            why: 'deleted key has a lone surrogate',
            batch: { ...valid, dels: [...valid.dels, { store: 's', key: '\udc00' }] },
          },
          {
            why: 'store is not a string',
            batch: { ...valid, dels: [...valid.dels, { store: null as never, key: 'a' }] },
          },
        ]
        for (const { why, batch } of invalid) {
          await expect(a.commit(batch), why).rejects.toThrow()
          expect({ s: await a.scan('s'), t: await a.scan('t') }, why).toEqual(before)
        }
        await a.commit(valid)
        expect(await a.scan('s')).toEqual([
          ['a', bytes(10)],
          ['new', bytes(11)],
        ])
        expect(await a.scan('t')).toEqual([['new', bytes(12)]])
      })
    })

    describe('stores', () => {
      it('keeps stores isolated, including names that prefix each other', async () => {
        const stores = ['s', 's2', 'ss', 's\u0000', 's/', '', 'ü', 'changes']
        await a.commit({
          puts: stores.flatMap((store, i) => [
            { store, key: 'k', value: bytes(i) },
            { store, key: `only-${i}`, value: bytes(i) },
          ]),
          dels: [],
        })
        for (const [i, store] of stores.entries()) {
          expect(await a.get(store, 'k')).toEqual(bytes(i))
          expect(await scanKeys(store)).toEqual(['k', `only-${i}`])
          expect(await scanKeys(store, { reverse: true })).toEqual([`only-${i}`, 'k'])
          expect(await scanKeys(store, { prefix: 'only' })).toEqual([`only-${i}`])
        }
        await del('s', ['k'])
        expect(await a.get('s', 'k')).toBeUndefined()
        for (const store of stores.slice(1)) expect(await a.get(store, 'k')).toBeDefined()
      })

      it('scans an unknown store as empty', async () => {
        await fill('s', ['a'])
        expect(await a.scan('unknown')).toEqual([])
        expect(await a.scan('unknown', { reverse: true, limit: 5, prefix: 'a' })).toEqual([])
      })
    })

    describe('scan', () => {
      const keys = ['a', 'a/', 'a/1', 'a/2', 'a/2/x', 'a0', 'ab', 'ab/', 'ab/1', 'b', 'b/1', 'c']
      beforeEach(async () => {
        await fill('s', keys)
        await fill('other', ['a/0', 'a/3', 'b/0'])
      })

      it('returns all entries ascending, with their values', async () => {
        const all = await a.scan('s')
        expect(keysOf(all)).toEqual(keys)
        for (const [k, v] of all) expect(v).toEqual(text(k))
        expect(await a.scan('s', {})).toEqual(all)
      })

      it('returns all entries descending with reverse', async () => {
        const all = await a.scan('s', { reverse: true })
        expect(keysOf(all)).toEqual([...keys].reverse())
        for (const [k, v] of all) expect(v).toEqual(text(k))
      })

      it('filters by prefix, not confusing a/ with ab/ or a0', async () => {
        expect(await scanKeys('s', { prefix: 'a/' })).toEqual(['a/', 'a/1', 'a/2', 'a/2/x'])
        expect(await scanKeys('s', { prefix: 'ab/' })).toEqual(['ab/', 'ab/1'])
        expect(await scanKeys('s', { prefix: 'ab' })).toEqual(['ab', 'ab/', 'ab/1'])
        expect(await scanKeys('s', { prefix: 'a' })).toEqual(keys.filter((k) => k.startsWith('a')))
        expect(await scanKeys('s', { prefix: 'a/2' })).toEqual(['a/2', 'a/2/x'])
        expect(await scanKeys('s', { prefix: 'c' })).toEqual(['c'])
        expect(await scanKeys('s', { prefix: 'zz' })).toEqual([])
        expect(await scanKeys('s', { prefix: 'a/2/x/' })).toEqual([])
        expect(await scanKeys('s', { prefix: '' })).toEqual(keys)
        expect(await scanKeys('s', { prefix: 'a/', reverse: true })).toEqual(['a/2/x', 'a/2', 'a/1', 'a/'])
      })

      it('filters by gt and lt, exclusive, whether or not the bounds exist', async () => {
        expect(await scanKeys('s', { gt: 'a/2' })).toEqual(['a/2/x', 'a0', 'ab', 'ab/', 'ab/1', 'b', 'b/1', 'c'])
        expect(await scanKeys('s', { gt: 'a/3' })).toEqual(['a0', 'ab', 'ab/', 'ab/1', 'b', 'b/1', 'c'])
        expect(await scanKeys('s', { lt: 'a0' })).toEqual(['a', 'a/', 'a/1', 'a/2', 'a/2/x'])
        expect(await scanKeys('s', { lt: 'a/10' })).toEqual(['a', 'a/', 'a/1'])
        expect(await scanKeys('s', { gt: 'a/1', lt: 'ab/' })).toEqual(['a/2', 'a/2/x', 'a0', 'ab'])
        expect(await scanKeys('s', { gt: '' })).toEqual(keys)
        expect(await scanKeys('s', { lt: '' })).toEqual([])
        expect(await scanKeys('s', { gt: 'c' })).toEqual([])
        expect(await scanKeys('s', { lt: 'a' })).toEqual([])
        expect(await scanKeys('s', { gt: 'b', lt: 'b' })).toEqual([])
        expect(await scanKeys('s', { gt: 'b/1', lt: 'b' })).toEqual([])
        expect(await scanKeys('s', { gt: 'a/1', lt: 'a/2' })).toEqual([])
        expect(await scanKeys('s', { gt: 'a/1', lt: 'ab/', reverse: true })).toEqual(['ab', 'a0', 'a/2/x', 'a/2'])
      })

      it('limits the result, counting from the end when reversed', async () => {
        expect(await scanKeys('s', { limit: 3 })).toEqual(['a', 'a/', 'a/1'])
        expect(await scanKeys('s', { limit: 3, reverse: true })).toEqual(['c', 'b/1', 'b'])
        expect(await scanKeys('s', { limit: 1 })).toEqual(['a'])
        expect(await scanKeys('s', { limit: 100 })).toEqual(keys)
        expect(await scanKeys('s', { limit: keys.length })).toEqual(keys)
        expect(await scanKeys('s', { limit: 0 })).toEqual([])
        expect(await scanKeys('s', { limit: 0, reverse: true })).toEqual([])
        expect(await scanKeys('s', { limit: -1 })).toEqual([])
      })

      it('combines prefix, gt, lt, limit and reverse', async () => {
        expect(await scanKeys('s', { prefix: 'a/', gt: 'a/1' })).toEqual(['a/2', 'a/2/x'])
        expect(await scanKeys('s', { prefix: 'a/', gt: 'a' })).toEqual(['a/', 'a/1', 'a/2', 'a/2/x'])
        expect(await scanKeys('s', { prefix: 'a/', gt: 'a/' })).toEqual(['a/1', 'a/2', 'a/2/x'])
        expect(await scanKeys('s', { prefix: 'a/', lt: 'a/2' })).toEqual(['a/', 'a/1'])
        expect(await scanKeys('s', { prefix: 'a/', lt: 'b' })).toEqual(['a/', 'a/1', 'a/2', 'a/2/x'])
        expect(await scanKeys('s', { prefix: 'a/', lt: 'a/' })).toEqual([])
        expect(await scanKeys('s', { prefix: 'a/', gt: 'a0' })).toEqual([])
        expect(await scanKeys('s', { prefix: 'a/', gt: 'a/', lt: 'a/2/x', limit: 5, reverse: true })).toEqual(['a/2', 'a/1'])
        expect(await scanKeys('s', { prefix: 'a', gt: 'a/1', lt: 'ab/1', limit: 2 })).toEqual(['a/2', 'a/2/x'])
        expect(await scanKeys('s', { prefix: 'a', gt: 'a/1', lt: 'ab/1', limit: 2, reverse: true })).toEqual(['ab/', 'ab'])
        expect(await scanKeys('s', { prefix: 'b', limit: 1, reverse: true })).toEqual(['b/1'])
      })

      it('agrees with a reference scan over a grid of options', async () => {
        const prefixes = [undefined, 'a', 'a/', 'ab', 'b/1']
        const bounds = [undefined, '', 'a/', 'a/15', 'ab/1', 'zz']
        for (const prefix of prefixes)
          for (const gt of bounds)
            for (const lt of bounds)
              for (const [limit, reverse] of [
                [undefined, false],
                [undefined, true],
                [2, false],
                [2, true],
              ] as const) {
                const o: ScanOptions = { prefix, gt, lt, limit, reverse }
                expect(await scanKeys('s', o), JSON.stringify(o)).toEqual(referenceScan(keys, o))
              }
      })
    })

    describe('keys', () => {
      it('scans 10k keys in order', async () => {
        const keys = Array.from({ length: 10_000 }, (_, i) => `k/${String(i).padStart(5, '0')}`)
        const order = shuffled(keys, 11)
        for (let i = 0; i < order.length; i += 1000) {
          await put(
            's',
            order.slice(i, i + 1000).map((k): [string, Uint8Array] => [k, text(k)]),
          )
        }
        const all = await a.scan('s')
        expect(keysOf(all)).toEqual(keys)
        expect(all[1234][1]).toEqual(text(keys[1234]))
        expect(keysOf(await a.scan('s', { reverse: true }))).toEqual([...keys].reverse())
        expect(await scanKeys('s', { prefix: 'k/012' })).toEqual(keys.slice(1200, 1300))
        expect(await scanKeys('s', { gt: keys[4999], limit: 3 })).toEqual(keys.slice(5000, 5003))
        expect(await scanKeys('s', { lt: keys[5000], limit: 3, reverse: true })).toEqual(keys.slice(4997, 5000).reverse())
        await del(
          's',
          keys.filter((_, i) => i % 3 === 0),
        )
        expect(await scanKeys('s')).toEqual(keys.filter((_, i) => i % 3 !== 0))
      })

      it('orders and round-trips ASCII keys by code, including empty and control characters', async () => {
        const keys = ['', '\u0000', '\u0000a', '\u0001', '\t', ' ', '!', '/', '0', '9', ':', 'A', 'Z', '[', '_', 'a', 'z', '~', '\u007f']
        await fill('s', keys)
        expect(await scanKeys('s')).toEqual(keys)
        expect(await scanKeys('s', { reverse: true })).toEqual([...keys].reverse())
        for (const k of keys) expect(await a.get('s', k)).toEqual(text(k))
        expect(await scanKeys('s', { prefix: '\u0000' })).toEqual(['\u0000', '\u0000a'])
        expect(await scanKeys('s', { gt: '', limit: 2 })).toEqual(['\u0000', '\u0000a'])
        expect(await scanKeys('s', { lt: '\u0000' })).toEqual([''])
      })

      it('orders and round-trips non-ASCII BMP keys by code point', async () => {
        const keys = [
          'x',
          'x\u0080',
          'x\u00e9',
          'x\u00e9t\u00e9',
          'x\u00ff',
          'x\u0100',
          'x\u03a9',
          'x\u4e2d',
          'x\u4e2d\u6587',
          'x\ud7ff',
          'x\ue000',
          'x\ufdd0',
          'x\ufffd',
          'x\uffff',
          'x\uffff\uffff',
          'y',
        ]
        await fill('s', keys)
        expect(await scanKeys('s')).toEqual(keys)
        expect(await scanKeys('s', { reverse: true })).toEqual([...keys].reverse())
        for (const k of keys) expect(await a.get('s', k)).toEqual(text(k))
        expect(await scanKeys('s', { prefix: 'x\u4e2d' })).toEqual(['x\u4e2d', 'x\u4e2d\u6587'])
        expect(await scanKeys('s', { prefix: 'x\u00e9' })).toEqual(['x\u00e9', 'x\u00e9t\u00e9'])
        expect(await scanKeys('s', { prefix: 'x\uffff' })).toEqual(['x\uffff', 'x\uffff\uffff'])
        expect(await scanKeys('s', { gt: 'x\u00ff', lt: 'x\ue000' })).toEqual(keys.slice(5, 10))
      })

      it('round-trips non-BMP keys; they sort above characters below U+D800', async () => {
        const keys = ['p', 'p/', 'pa', 'p\u00e9', 'p\u4e2d', 'p\u{1f600}', 'p\u{1f600}/1', 'p\u{1f601}', 'p\u{10ffff}', 'q']
        await fill('s', keys)
        for (const k of keys) expect(await a.get('s', k)).toEqual(text(k))
        expect(await scanKeys('s')).toEqual(keys)
        expect(await scanKeys('s', { prefix: 'p\u{1f600}' })).toEqual(['p\u{1f600}', 'p\u{1f600}/1'])
        expect(await scanKeys('s', { gt: 'p\u4e2d', lt: 'q' })).toEqual(keys.slice(5, 9))
        // Relative to U+E000..U+FFFF the order differs between UTF-8 and IndexedDB: only
        // membership is compared there.
        await fill('s', ['p\uffff', 'p\uffffz', 'p\ue000'])
        const withPrefix = await scanKeys('s', { prefix: 'p' })
        expect([...withPrefix].sort()).toEqual([...keys.filter((k) => k !== 'q'), 'p\uffff', 'p\uffffz', 'p\ue000'].sort())
        expect(await scanKeys('s', { prefix: 'p\uffff' })).toEqual(['p\uffff', 'p\uffffz'])
      })
    })

    it('matches a reference model under random batches and scans', async () => {
      const alphabet = ['\u0000', '/', '0', 'a', 'b', '\u00e9', '\u4e2d', '\uffff']
      const keyArb = fc.array(fc.constantFrom(...alphabet), { maxLength: 3 }).map((cs) => cs.join(''))
      const opArb = fc.oneof(
        fc.record({
          kind: fc.constant('batch' as const),
          puts: fc.array(fc.tuple(keyArb, fc.uint8Array({ maxLength: 6 })), { maxLength: 6 }),
          dels: fc.array(keyArb, { maxLength: 3 }),
        }),
        fc.record({
          kind: fc.constant('scan' as const),
          options: fc.record(
            {
              prefix: keyArb,
              gt: keyArb,
              lt: keyArb,
              limit: fc.integer({ min: 0, max: 5 }),
              reverse: fc.boolean(),
            },
            { requiredKeys: [] },
          ),
        }),
        fc.record({ kind: fc.constant('get' as const), keys: fc.array(keyArb, { maxLength: 4 }) }),
      )
      let run = 0
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 12 }), async (ops) => {
          const store = `model-${run++}`
          const model = new Map<string, Uint8Array>()
          for (const op of ops) {
            if (op.kind === 'batch') {
              await a.commit({
                puts: op.puts.map(([key, value]) => ({ store, key, value })),
                dels: op.dels.map((key) => ({ store, key })),
              })
              for (const [k, v] of op.puts) model.set(k, v)
              for (const k of op.dels) model.delete(k)
            } else if (op.kind === 'scan') {
              const expected = referenceScan(model.keys(), op.options).map((k) => [k, model.get(k)])
              expect(await a.scan(store, op.options)).toEqual(expected)
            } else {
              expect(await a.getMany(store, op.keys)).toEqual(op.keys.map((k) => model.get(k)))
            }
          }
        }),
        { numRuns: 100 },
      )
    })

    describe('lifecycle', () => {
      it('rejects operations after close; close is idempotent', async () => {
        await put('s', [['k', bytes(1)]])
        await a.close()
        await a.close()
        await expect(a.get('s', 'k')).rejects.toThrow()
        await expect(a.getMany('s', ['k'])).rejects.toThrow()
        await expect(a.scan('s')).rejects.toThrow()
        await expect(put('s', [['k', bytes(2)]])).rejects.toThrow()
      })

      // Only adapters over durable storage have a reopen; an in-memory one is not asked.
      ;(options.persistent ? it : () => undefined)('persists committed data across reopen', async () => {
        if (!fixture.reopen) throw new Error('a persistent adapter fixture must provide reopen')
        const big = pattern(1 << 20, 5)
        await put('s', [
          ['a', bytes(1)],
          ['b', bytes(2)],
          ['empty', new Uint8Array(0)],
          ['big', big],
          ['\u4e2d', bytes(3)],
        ])
        await put('t', [['a', bytes(9)]])
        await put('s', [['a', bytes(4)]])
        await del('s', ['b'])
        await expect(a.commit({ puts: [{ store: 's', key: 'bad', value: 'x' as never }], dels: [{ store: 's', key: 'a' }] })).rejects.toThrow()
        const expected = await a.scan('s')
        expect(keysOf(expected)).toEqual(['a', 'big', 'empty', '\u4e2d'])

        await reopen()
        const after = await a.scan('s')
        expect(keysOf(after)).toEqual(keysOf(expected))
        after.forEach(([k, v], i) => expect(sameBytes(v, expected[i][1]), k).toBe(true))
        expect(await a.get('s', 'a')).toEqual(bytes(4))
        expect(await a.get('s', 'b')).toBeUndefined()
        expect(sameBytes(await a.get('s', 'big'), big)).toBe(true)
        expect(await a.scan('t')).toEqual([['a', bytes(9)]])

        await a.commit({ puts: [{ store: 's', key: 'c', value: bytes(5) }], dels: [{ store: 's', key: 'big' }] })
        await reopen()
        expect(keysOf(await a.scan('s'))).toEqual(['a', 'c', 'empty', '\u4e2d'])
        expect(await a.get('s', 'c')).toEqual(bytes(5))
      })
    })
  })
}
