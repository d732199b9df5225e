/**
 * The IndexedDB adapter's log layout (sync/storage/indexeddb.ts) beyond the conformance suite:
 * compaction keeps every commit (those issued while it runs included), a database in the first
 * layout (one record per key) is read and migrated, and a second instance takes the database
 * over so two writers never interleave. On fake-indexeddb; the conformance suite also runs on
 * real IndexedDB in Chromium (npm run test:browser).
 */
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { IndexedDbStorageAdapter } from '../../sync/storage/indexeddb.ts'
import { decodeBatch, encodeBatch } from '../../sync/storage/indexeddb-log.ts'

const factory = new IDBFactory()
let n = 0
const fresh = () => {
  const dbName = `log-${n++}`
  return { dbName, open: () => new IndexedDbStorageAdapter({ dbName, indexedDB: factory, IDBKeyRange }) }
}
const b = (...xs: number[]) => new Uint8Array(xs)

function rawRecords(dbName: string, store: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = factory.open(dbName)
    req.onsuccess = () => {
      const db = req.result
      if (!db.objectStoreNames.contains(store)) return (db.close(), resolve(0))
      const count = db.transaction(store).objectStore(store).count()
      count.onsuccess = () => (db.close(), resolve(count.result))
      count.onerror = () => reject(count.error)
    }
    req.onerror = () => reject(req.error)
  })
}

describe('log record codec', () => {
  it('round-trips puts, deletes, empty values and non-ASCII names; rejects damaged records', () => {
    const batch = {
      puts: [
        { store: 's', key: '\u4e2d/k', value: b(1, 2) },
        { store: 't', key: '', value: b() },
      ],
      dels: [{ store: 's', key: 'gone' }],
    }
    const rec = encodeBatch(batch)
    expect(decodeBatch(rec)).toEqual(batch)
    expect(() => decodeBatch(rec.subarray(0, rec.length - 1))).toThrow()
    expect(() => decodeBatch(new Uint8Array([...rec, 0]))).toThrow()
  })
})

describe('compaction', () => {
  const big = (i: number) => new Uint8Array(256 << 10).fill(i & 255)

  it('once overwritten values outweigh the live data, the log is rewritten as a snapshot; reopening gives the same data', async () => {
    const { dbName, open } = fresh()
    let a = open()
    for (let i = 0; i < 40; i++) await a.commit({ puts: [{ store: 's', key: `k${i % 4}`, value: big(i) }], dels: [] })
    const before = await a.scan('s')
    await a.close()
    // 40 records of 256 KiB for 1 MiB of data: compacted (to a snapshot and the commits since).
    expect(await rawRecords(dbName, 'log')).toBeLessThan(30)
    a = open()
    expect(await a.scan('s')).toEqual(before)
    expect(before.map(([k, v]) => [k, v[0]])).toEqual([
      ['k0', 36],
      ['k1', 37],
      ['k2', 38],
      ['k3', 39],
    ])
    await a.close()
  })

  it('an append-only log is not rewritten until it holds many records', async () => {
    const { dbName, open } = fresh()
    let a = open()
    for (let i = 0; i < 30; i++) await a.commit({ puts: [{ store: 's', key: `k${i}`, value: big(i) }], dels: [] })
    await a.close()
    expect(await rawRecords(dbName, 'log')).toBe(30)
    // Small commits, each deleting the key the one before wrote: compacted by their count.
    const other = fresh()
    a = other.open()
    for (let i = 0; i < 4200; i++) await a.commit({ puts: [{ store: 't', key: `k${i}`, value: b(1) }], dels: i > 0 ? [{ store: 't', key: `k${i - 1}` }] : [] })
    const before = { s: await a.scan('s'), t: await a.scan('t') }
    await a.close()
    expect(before.s).toEqual([])
    expect(await rawRecords(other.dbName, 'log')).toBeLessThan(4200)
    a = other.open()
    expect({ s: await a.scan('s'), t: await a.scan('t') }).toEqual(before)
    expect(before.t).toEqual([['k4199', b(1)]])
    await a.close()
  })

  it('commits issued while a compaction is being written survive a reopen, in order', async () => {
    const { open } = fresh()
    let a = open()
    // Compaction starts around commit 21; the commits issued after it overwrite keys it snapshots.
    const pending: Promise<void>[] = []
    for (let i = 0; i < 30; i++)
      pending.push(
        a.commit({
          puts: [
            { store: 's', key: `k${i % 5}`, value: big(i) },
            { store: 't', key: `n${i}`, value: b(i) },
          ],
          dels: [],
        }),
      )
    await Promise.all(pending)
    const expected = { s: await a.scan('s'), t: await a.scan('t') }
    expect(expected.s.map(([k, v]) => [k, v[0]])).toEqual([
      ['k0', 25],
      ['k1', 26],
      ['k2', 27],
      ['k3', 28],
      ['k4', 29],
    ])
    expect(expected.t.length).toBe(30)
    await a.close()
    a = open()
    expect({ s: await a.scan('s'), t: await a.scan('t') }).toEqual(expected)
    await a.close()
  })
})

describe('the first layout (one record per key)', () => {
  it('is read at open, kept across reopen, and migrated into the log', async () => {
    const dbName = `legacy-${n++}`
    await new Promise<void>((resolve, reject) => {
      const req = factory.open(dbName, 1)
      req.onupgradeneeded = () => req.result.createObjectStore('kv')
      req.onsuccess = () => {
        const tx = req.result.transaction('kv', 'readwrite')
        tx.objectStore('kv').put(b(1), ['s', 'a'])
        tx.objectStore('kv').put(b(2), ['s', 'b'])
        tx.objectStore('kv').put(b(3), ['t', 'a'])
        tx.oncomplete = () => (req.result.close(), resolve())
        tx.onabort = () => reject(tx.error)
      }
      req.onerror = () => reject(req.error)
    })
    let a = new IndexedDbStorageAdapter({ dbName, indexedDB: factory, IDBKeyRange })
    expect(await a.scan('s')).toEqual([
      ['a', b(1)],
      ['b', b(2)],
    ])
    await a.commit({ puts: [{ store: 's', key: 'c', value: b(4) }], dels: [{ store: 's', key: 'a' }] })
    await a.close()
    expect(await rawRecords(dbName, 'kv')).toBe(0)
    a = new IndexedDbStorageAdapter({ dbName, indexedDB: factory, IDBKeyRange })
    expect(await a.scan('s')).toEqual([
      ['b', b(2)],
      ['c', b(4)],
    ])
    expect(await a.get('t', 'a')).toEqual(b(3))
    await a.close()
  })
})

describe('one writer per database', () => {
  it('a second instance takes the database over; the first rejects every later call', async () => {
    const { open } = fresh()
    const first = open()
    await first.commit({ puts: [{ store: 's', key: 'a', value: b(1) }], dels: [] })
    const second = open()
    expect(await second.get('s', 'a')).toEqual(b(1))
    await expect(first.commit({ puts: [{ store: 's', key: 'a', value: b(2) }], dels: [] })).rejects.toThrow(/another instance/)
    await expect(first.get('s', 'a')).rejects.toThrow(/another instance/)
    await second.commit({ puts: [{ store: 's', key: 'b', value: b(3) }], dels: [] })
    expect(await second.scan('s')).toEqual([
      ['a', b(1)],
      ['b', b(3)],
    ])
    await second.close()
    await first.close()
  })
})
