import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { SqliteStorageAdapter } from '../../node/storage/sqlite.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { accountValuesDataset, LOCAL_VALUES_STORE } from '../../sync/space/scoped-values.ts'
import { MemoryScopedValueStore, type ScopedKey, type ScopedValueStore } from '../../sync/space/types/index.ts'
import type { StorageAdapter } from '../../sync/storage/adapter.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { keyFor, pushAll, seededEnv } from '../helpers.ts'

async function device(seed: number, storage: StorageAdapter = new MemoryStorageAdapter()) {
  return AccountEngine.open({ storage, crypto: await defaultCryptoProvider(), env: seededEnv(seed), accountKey: keyFor(1) })
}

const key = (scope: 'account' | 'local', objectId: string, propId: string, spaceId = 'sp1', typeKey = 'T1'): ScopedKey => ({ scope, spaceId, objectId, typeKey, propId })

/** The store contract, run against the in-memory store and the account's store. */
async function contract(store: ScopedValueStore) {
  await store.set(key('account', 'o1', 'a'), { deep: [1, 2] })
  await store.setMany([
    [key('local', 'o1', 'l'), 'here'],
    [key('account', 'o2', 'a'), true],
    [key('account', 'o1', 'a', 'sp2'), 'other space'],
  ])
  expect(await store.get(key('account', 'o1', 'a'))).toEqual({ deep: [1, 2] })
  expect(await store.get(key('local', 'o1', 'a'))).toBeUndefined()
  expect(await store.get(key('local', 'o1', 'l'))).toBe('here')
  expect(await store.list('sp1', 'o1')).toEqual(
    expect.arrayContaining([
      { ...key('account', 'o1', 'a'), value: { deep: [1, 2] } },
      { ...key('local', 'o1', 'l'), value: 'here' },
    ]),
  )
  expect((await store.list('sp1', 'o1')).length).toBe(2)
  const rows = await store.rowsOf('sp1', ['o1', 'o2', 'o3'])
  expect([...rows.keys()].sort()).toEqual(['o1', 'o2'])
  expect(rows.get('o1')).toEqual({ T1: { a: { deep: [1, 2] }, l: 'here' } })
  expect((await store.rowsOf('sp2', ['o1'])).get('o1')).toEqual({ T1: { a: 'other space' } })
  // Callers get copies: changing one does not change the store.
  ;(rows.get('o1')!.T1.a as { deep: number[] }).deep.push(3)
  expect(await store.get(key('account', 'o1', 'a'))).toEqual({ deep: [1, 2] })
  // null unsets; a value set again after an unset is kept.
  await store.setMany([
    [key('account', 'o1', 'a'), null],
    [key('local', 'o1', 'l'), null],
  ])
  expect(await store.get(key('account', 'o1', 'a'))).toBeUndefined()
  expect((await store.rowsOf('sp1', ['o1'])).has('o1')).toBe(false)
  await store.set(key('account', 'o1', 'a'), 2)
  expect(await store.get(key('account', 'o1', 'a'))).toBe(2)
}

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('scoped value stores', () => {
  it('the in-memory store keeps the contract', async () => {
    await contract(new MemoryScopedValueStore())
  })

  it("the account's store keeps the contract; account values are tech-space records, local ones device storage", async () => {
    const storage = new MemoryStorageAdapter()
    const a = await device(1, storage)
    await contract(a.scopedValues)
    const rec = await a.tech.replica.getRecord(a.techObject, accountValuesDataset('sp1'), 'o1')
    expect(rec?.value).toEqual({ T1: { a: 2 } })
    await a.scopedValues.set(key('local', 'o9', 'l'), 'x')
    const locals = await storage.scan(LOCAL_VALUES_STORE)
    expect(locals.map(([k]) => k)).toEqual(['sp1/o9/T1/l'])
    // A local value never enters the tech space.
    expect(await a.tech.replica.getRecord(a.techObject, accountValuesDataset('sp1'), 'o9')).toBeUndefined()
  })

  it('SQLite: both scopes survive closing and reopening the database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-scoped-'))
    dirs.push(dir)
    const file = join(dir, 'engine.db')
    let storage = new SqliteStorageAdapter(file)
    let a = await device(1, storage)
    await a.scopedValues.setMany([
      [key('account', 'o1', 'a'), { n: 1 }],
      [key('local', 'o1', 'l'), 'device only'],
      [key('local', 'o/2', 'l'), 'escaped id'],
    ])
    await a.scopedValues.set(key('account', 'o1', 'gone'), 1)
    await a.scopedValues.set(key('account', 'o1', 'gone'), null)
    await a.close()
    await storage.close()

    storage = new SqliteStorageAdapter(file)
    a = await device(1, storage)
    const rows = await a.scopedValues.rowsOf('sp1', ['o1', 'o/2'])
    expect(rows.get('o1')).toEqual({ T1: { a: { n: 1 }, l: 'device only' } })
    expect(rows.get('o/2')).toEqual({ T1: { l: 'escaped id' } })
    await a.close()
    await storage.close()
  })

  it("account values reach the account's other device; local values stay on theirs", async () => {
    const a = await device(1)
    const b = await device(2)
    expect(b.tech.spaceId).toBe(a.tech.spaceId)
    const sync = async () => {
      await pushAll(a.tech.replica, b.tech.replica)
      await pushAll(b.tech.replica, a.tech.replica)
      await a.tech.settled()
      await b.tech.settled()
    }
    // B reads first, so its cache of sp1 is loaded and must be refreshed by sync.
    expect((await b.scopedValues.rowsOf('sp1', ['o1'])).size).toBe(0)
    await a.scopedValues.setMany([
      [key('account', 'o1', 'a'), 'from A'],
      [key('local', 'o1', 'l'), 'A only'],
    ])
    await b.scopedValues.set(key('account', 'o1', 'b'), 'from B')
    await sync()
    expect((await b.scopedValues.rowsOf('sp1', ['o1'])).get('o1')).toEqual({ T1: { a: 'from A', b: 'from B' } })
    expect((await a.scopedValues.rowsOf('sp1', ['o1'])).get('o1')).toEqual({ T1: { a: 'from A', b: 'from B', l: 'A only' } })
    // An unset on one device reaches the other; a device never seen the space before reads it too.
    await b.scopedValues.set(key('account', 'o1', 'a'), null)
    await sync()
    expect(await a.scopedValues.get(key('account', 'o1', 'a'))).toBeUndefined()
    const c = await device(3)
    await pushAll(a.tech.replica, c.tech.replica)
    await c.tech.settled()
    expect((await c.scopedValues.rowsOf('sp1', ['o1'])).get('o1')).toEqual({ T1: { b: 'from B' } })
  })

  it("a space's services are built when it opens, holding the account's store, one types service shared by bundles and modules", async () => {
    const a = await device(1)
    const sp = a.space((await a.createSpace({ name: 'S' })).id)
    expect(sp.services.types.scoped).toBe(a.scopedValues)
    expect(sp.services.bundles.types).toBe(sp.services.types)
    // A space opened later (another device's) gets the same wiring.
    const other = a.space((await a.createSpace({ name: 'T' })).id)
    expect(other.services.types.scoped).toBe(a.scopedValues)
    expect(other.services.types).not.toBe(sp.services.types)
  })
})
