import { describe, expect, it } from 'vitest'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { storedChangeNumbers, type ChangeNumbers } from '../../sync/replica/change-numbers.ts'
import { decodeStoredHead, decodeStoredRecord, encodeStoredRecord, MemoryNumbering, storedVersionOf, type StoredRecord } from '../../sync/replica/record-codec.ts'
import { STORES, type StorageAdapter, type WriteBatch } from '../../sync/storage/adapter.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { ROW_DS, ROW_ID } from '../../sync/space/schema.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { deps, keyFor } from '../helpers.ts'

const CHANGE = (n: number) => `Chg${n}`.padEnd(44, 'x')
const stamp = (i: number, change = 1) => ({ l: change + 2, c: CHANGE(change), a: 'Auth'.padEnd(44, 'y'), t: 1_700_000_000_000 + change, i })
const record = (): StoredRecord => ({
  // Newlines, a key named like the log, and non-ASCII text inside the value.
  value: { core: { name: 'line one\nline two', log: ['[', '\n]', '{"log":[]}'] }, x: 'ünïcødé 🙂\u2028', n: null },
  created: stamp(0),
  modified: stamp(4, 3),
  deleted: stamp(5, 4),
  first: stamp(1),
  pending: [{ s: stamp(6, 5), op: { k: 'set', p: 'a', v: 'b\nc' } }],
  log: [
    // Of the creating change: the value the record holds (left out), another one (kept), an unset.
    { s: { l: 3, c: CHANGE(1), i: 1 }, k: 'set', p: 'core.name', v: 'line one\nline two' },
    { s: { l: 3, c: CHANGE(1), i: 2 }, k: 'set', p: 'core.log', v: ['an older value'] },
    { s: { l: 3, c: CHANGE(1), i: 3 }, k: 'unset', p: 'gone' },
    // Of other changes: the same three kinds, and a set of null.
    { s: { l: 4, c: CHANGE(2), i: 0 }, k: 'set', p: 'x', v: 'ünïcødé 🙂\u2028' },
    { s: { l: 4, c: CHANGE(2), i: 1 }, k: 'set', p: 'core.log', v: { other: 1 } },
    { s: { l: 5, c: CHANGE(3), i: 0 }, k: 'unset', p: 'core.gone' },
    { s: { l: 5, c: CHANGE(3), i: 4 }, k: 'set', p: 'n', v: null },
  ],
  v: 42,
})

/** Layout 1 (before issue 42): 0x01, the record without its log as JSON, a newline, the log. */
function layout1(st: StoredRecord): Uint8Array {
  const { log, ...head } = st
  return new TextEncoder().encode('\u0001' + JSON.stringify(head) + '\n' + JSON.stringify(log))
}

/** A storage adapter whose next commit can be made to fail. */
class FlakyStorage extends MemoryStorageAdapter {
  failNext = false
  override async commit(batch: WriteBatch) {
    if (this.failNext) {
      this.failNext = false
      throw new Error('disk full')
    }
    return super.commit(batch)
  }
}

const rowsOf = (storage: StorageAdapter, spaceId: string) => storage.scan(STORES.records, { prefix: `${spaceId}/` })

describe('stored record layout (numbered changes, head, newline, log)', () => {
  it('decodes to the record it encoded, naming changes by number; the head alone is the record without its log', () => {
    const st = record()
    const nums = new MemoryNumbering()
    const bytes = encodeStoredRecord(st, nums)
    expect(bytes[0]).toBe(0x02)
    const text = new TextDecoder().decode(bytes)
    // No change id in the bytes but those of `pending` (kept as they are): every change is a number.
    for (const n of [1, 2, 3, 4]) expect(text).not.toContain(`Chg${n}`)
    expect([...nums.ids].sort()).toEqual([CHANGE(1), CHANGE(2), CHANGE(3), CHANGE(4)])
    expect(decodeStoredRecord(bytes, nums)).toEqual(st)
    const { log: _log, ...head } = st
    expect(decodeStoredHead(bytes, nums)).toEqual(head)
    expect(storedVersionOf(bytes)).toBe(42)
    // The value the record holds is not written again in the log; a value it does not hold is.
    expect(text.split('\n')[1]).not.toContain('line one')
    expect(text.split('\n')[1]).toContain('an older value')
    // A record with an empty log and no value.
    const bare: StoredRecord = { value: undefined, created: stamp(1), modified: stamp(1), log: [], v: 1 }
    expect(decodeStoredRecord(encodeStoredRecord(bare, nums), nums)).toEqual({ created: stamp(1), modified: stamp(1), log: [], v: 1 })
  })

  it('keeps the trace ids a stamp carries (`_traces`), on the created and on a later modifying change', () => {
    const nums = new MemoryNumbering()
    // stamp(op index, change): a change's trace ids are the same on every stamp of it.
    const traced = (i: number, change: number, tr: string[]) => ({ ...stamp(i, change), tr })
    const created: StoredRecord = { value: { a: 1 }, created: traced(0, 1, ['t1']), modified: traced(1, 1, ['t1']), log: [], v: 3 }
    expect(decodeStoredRecord(encodeStoredRecord(created, nums), nums)).toEqual(created)
    const later: StoredRecord = { value: { a: 2 }, created: traced(0, 1, ['t1']), modified: traced(0, 2, ['t2', 't3']), log: [], v: 4 }
    expect(decodeStoredRecord(encodeStoredRecord(later, nums), nums)).toEqual(later)
    const untraced: StoredRecord = { value: { a: 3 }, created: traced(0, 1, ['t1']), modified: stamp(0, 3), log: [], v: 5 }
    expect(decodeStoredRecord(encodeStoredRecord(untraced, nums), nums)).toEqual(untraced)
  })

  it('records written by earlier builds (layout 1, whole JSON, canonical CBOR) still decode, whole or head', () => {
    const st = record()
    const none = new MemoryNumbering()
    for (const bytes of [layout1(st), new TextEncoder().encode(JSON.stringify(st)), encodeCanonical(st)]) {
      expect(decodeStoredRecord(bytes, none)).toEqual(st)
      expect(decodeStoredHead(bytes, none)).toMatchObject({ value: st.value, created: st.created, modified: st.modified, v: 42 })
      expect(storedVersionOf(bytes)).toBe(42)
    }
    expect(none.ids).toEqual([])
  })

  it('a small object row (a type, four short fields) is at most 400 bytes', async () => {
    const storage = new MemoryStorageAdapter()
    const a = await SpaceEngine.create(await deps(1, storage), keyFor(1), { modules: DEFAULT_MODULES })
    const { id: typeId } = await a.services.types.createType({ xKey: 'task', name: 'Task' })
    const id = await a.createObject({ types: [typeId], initialProperties: { core: { name: 'Object 17', description: 'a small one', icon: 'i', tags: ['q3'] } } })
    const [[, row]] = await storage.scan(STORES.records, { prefix: `${a.spaceId}/${id}/` })
    expect(row[0]).toBe(0x02)
    expect(row.byteLength).toBeLessThanOrEqual(400)
    // In layout 1 the same row took over a kilobyte.
    const numbers = await storedChangeNumbers(storage, a.spaceId)
    expect(layout1(decodeStoredRecord(row, { idOf: (n) => numbers.get(n)! })).byteLength).toBeGreaterThan(1000)
  })

  it('a space whose records are in the older layouts opens to the same rows, records and state digest, and writes the new one', async () => {
    const storage = new MemoryStorageAdapter()
    const d = await deps(1, storage)
    const a = await SpaceEngine.create(d, keyFor(1), { modules: DEFAULT_MODULES })
    const ids: string[] = []
    for (let i = 0; i < 6; i++) {
      const id = await a.createObject({ initialProperties: { core: { name: `object ${i}\nsecond line` } } })
      await a.write(id, [{ op: 'set', ds: 'notes', id: 'n1', path: 'text', value: `note ${i}` }])
      await a.write(id, [{ op: 'set', ds: 'notes', id: 'n1', path: 'more', value: { k: i } }])
      ids.push(id)
    }
    await a.deleteObject(ids[5])
    await a.settled()
    const digest = await a.replica.stateDigest()
    const rows = ids.map((id) => a.objectDoc(id))
    const notes = await Promise.all(ids.map((id) => a.replica.listRecords(id, 'notes')))
    const logs = await Promise.all(ids.map((id) => a.replica.recordLog(id, 'notes', 'n1')))
    // Every record back in layout 1 or whole JSON, ids in full, as earlier builds wrote them.
    const stored = await rowsOf(storage, a.spaceId)
    expect(stored.length).toBeGreaterThan(10)
    const numbering = { idOf: (n: number) => numbers.get(n)! }
    const numbers = await storedChangeNumbers(storage, a.spaceId)
    const puts = stored.map(([key, v], i) => {
      expect(v[0]).toBe(0x02)
      const st = decodeStoredRecord(v, numbering)
      return { store: STORES.records, key, value: i % 2 ? layout1(st) : new TextEncoder().encode(JSON.stringify(st)) }
    })
    await storage.commit({ puts, dels: [] })
    const b = await SpaceEngine.open({ ...d, storage }, a.spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    expect(await b.replica.stateDigest()).toBe(digest)
    expect(ids.map((id) => b.objectDoc(id))).toEqual(rows)
    expect(await Promise.all(ids.map((id) => b.replica.listRecords(id, 'notes')))).toEqual(notes)
    expect(await Promise.all(ids.map((id) => b.replica.recordLog(id, 'notes', 'n1')))).toEqual(logs)
    expect(await b.replica.getRecordsOf(ids, ROW_DS, ROW_ID)).toEqual(await a.replica.getRecordsOf(ids, ROW_DS, ROW_ID))
    // Writes still merge over records of either layout (the log is read whole where merge needs
    // it), and what they write is in the numbered layout.
    for (const id of ids.slice(0, 5)) await b.write(id, [{ op: 'set', ds: ROW_DS, id: ROW_ID, path: 'core.name', value: 'renamed' }])
    expect(ids.slice(0, 5).map((id) => (b.objectDoc(id)?.core as { name: string }).name)).toEqual(Array(5).fill('renamed'))
    for (const id of ids.slice(0, 5)) expect((await storage.get(STORES.records, `${a.spaceId}/${id}/${ROW_DS}/${ROW_ID}`))![0]).toBe(0x02)
  })

  it('numbers are per device: two replicas number the same changes differently and agree on the digest', async () => {
    const a = await SpaceEngine.create(await deps(1), keyFor(1))
    const x = await a.createObject({ initialProperties: { core: { name: 'x' } } })
    const y = await a.createObject({ initialProperties: { core: { name: 'y' } } })
    await a.write(x, [{ op: 'set', ds: 'notes', id: 'n', path: 'v', value: 1 }])
    const storageB = new MemoryStorageAdapter()
    const b = await SpaceEngine.open(await deps(2, storageB), a.spaceId, keyFor(1))
    // B takes y's tree before x's: its first numbers go to other changes than A's.
    const all = await a.replica.allChanges()
    const order = [...all.filter((c) => c.treeId !== x), ...all.filter((c) => c.treeId === x)]
    expect((await b.replica.ingest(order.map(({ id, raw }) => ({ id, raw })))).rejected).toEqual([])
    await b.settled()
    const numsA = await storedChangeNumbers(a.replica.storage, a.spaceId)
    const numsB = await storedChangeNumbers(storageB, a.spaceId)
    expect(new Set(numsA.values())).toEqual(new Set(numsB.values()))
    expect([...numsA.entries()]).not.toEqual([...numsB.entries()])
    expect(await b.replica.stateDigest()).toBe(await a.replica.stateDigest())
    expect(b.objectDoc(y)).toEqual(a.objectDoc(y))
    expect(await b.replica.recordLog(x, 'notes', 'n')).toEqual(await a.replica.recordLog(x, 'notes', 'n'))
  })

  it('numbers survive a restart, are never handed out twice, and a failed commit stores its numbers with the next one', async () => {
    const storage = new FlakyStorage()
    const d = await deps(1, storage)
    const a = await SpaceEngine.create(d, keyFor(1))
    const x = await a.createObject({ initialProperties: { core: { name: 'x' } } })
    const y = await a.createObject({ initialProperties: { core: { name: 'y' } } })
    // The failed batch numbered its change; the next batch stores that number too.
    const numbers = (a.replica as unknown as { s: { numbers: ChangeNumbers } }).s.numbers
    storage.failNext = true
    const failing = numbers.nextFree
    await expect(a.write(x, [{ op: 'set', ds: 'notes', id: 'n', path: 'v', value: 'lost' }])).rejects.toThrow('disk full')
    expect(numbers.nextFree).toBeGreaterThan(failing)
    await a.write(y, [{ op: 'set', ds: 'notes', id: 'n', path: 'w', value: 'kept' }])
    const before = await storedChangeNumbers(storage, a.spaceId)
    expect(before.has(failing)).toBe(true)
    const b = await SpaceEngine.open({ ...d, storage }, a.spaceId, keyFor(1))
    expect(await b.replica.listRecords(y, 'notes')).toEqual(await a.replica.listRecords(y, 'notes'))
    await b.write(y, [{ op: 'set', ds: 'notes', id: 'n', path: 'z', value: 'after' }])
    const after = await storedChangeNumbers(storage, a.spaceId)
    // Every number names one id for good; the restart's numbers come after the earlier ones.
    for (const [n, id] of before) expect(after.get(n)).toBe(id)
    const fresh = [...after.keys()].filter((n) => !before.has(n))
    expect(fresh.length).toBeGreaterThan(0)
    expect(Math.min(...fresh)).toBeGreaterThan(Math.max(...before.keys()))
    const c = await SpaceEngine.open({ ...d, storage }, a.spaceId, keyFor(1))
    expect((await c.replica.recordLog(y, 'notes', 'n')).map((e) => e.p)).toEqual(['w', 'z'])
    expect(await c.replica.recordLog(y, 'notes', 'n')).toEqual(await b.replica.recordLog(y, 'notes', 'n'))
  })

  it('the numbers kept in memory are bounded: those that left are read again or numbered again', async () => {
    const storage = new MemoryStorageAdapter()
    const d = { ...(await deps(1, storage)), limits: { maxCachedChangeNumbers: 8, maxCachedRecords: 4 } }
    const a = await SpaceEngine.create(d, keyFor(1))
    const ids: string[] = []
    for (let i = 0; i < 12; i++) ids.push(await a.createObject({ initialProperties: { core: { name: `o${i}` } } }))
    for (const id of ids) await a.write(id, [{ op: 'set', ds: ROW_DS, id: ROW_ID, path: 'core.description', value: 'second' }])
    const numbers = (a.replica as unknown as { s: { numbers: ChangeNumbers } }).s.numbers
    expect(numbers.size).toBeLessThanOrEqual(8)
    const b = await SpaceEngine.open(d, a.spaceId, keyFor(1))
    expect(await b.replica.stateDigest()).toBe(await a.replica.stateDigest())
    expect(ids.map((id) => b.objectDoc(id))).toEqual(ids.map((id) => a.objectDoc(id)))
    expect(await Promise.all(ids.map((id) => b.replica.recordLog(id, ROW_DS, ROW_ID)))).toEqual(await Promise.all(ids.map((id) => a.replica.recordLog(id, ROW_DS, ROW_ID))))
  })
})
