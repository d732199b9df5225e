import { describe, expect, it } from 'vitest'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { decodeStoredHead, decodeStoredRecord, encodeStoredRecord, type StoredRecord } from '../../sync/replica/record-codec.ts'
import { STORES } from '../../sync/storage/adapter.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { ROW_DS, ROW_ID } from '../../sync/space/schema.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { deps, keyFor } from '../helpers.ts'

const stamp = (i: number) => ({ l: 3, c: 'Chg' + i, a: 'Auth', t: 1_700_000_000_000 + i, i })
const record = (): StoredRecord => ({
  // Newlines, a key named like the log, and non-ASCII text inside the value.
  value: { core: { name: 'line one\nline two', log: ['[', '\n]', '{"log":[]}'] }, x: 'ünïcødé 🙂\u2028' },
  created: stamp(1),
  modified: stamp(4),
  deleted: stamp(5),
  first: stamp(1),
  pending: [{ s: stamp(6), op: { k: 'set', p: 'a', v: 'b\nc' } }],
  log: [
    { s: stamp(2), k: 'set', p: 'core.name', v: 'line one\nline two' },
    { s: stamp(3), k: 'set', p: 'x', v: 'ünïcødé 🙂\u2028' },
  ] as unknown as StoredRecord['log'],
  v: 42,
})

describe('stored record layout (head, newline, log)', () => {
  it('decodes to the record it encoded; the head alone is the record without its log', () => {
    const st = record()
    const bytes = encodeStoredRecord(st)
    expect(bytes[0]).toBe(0x01)
    expect(decodeStoredRecord(bytes)).toEqual(st)
    const { log: _log, ...head } = st
    expect(decodeStoredHead(bytes)).toEqual(head)
    // A record with an empty log and no value.
    const bare: StoredRecord = { value: undefined, created: stamp(1), modified: stamp(1), log: [], v: 1 }
    expect(decodeStoredRecord(encodeStoredRecord(bare))).toEqual({ created: stamp(1), modified: stamp(1), log: [], v: 1 })
  })

  it('records written by earlier builds (whole JSON, canonical CBOR) still decode, whole or head', () => {
    const st = record()
    for (const bytes of [new TextEncoder().encode(JSON.stringify(st)), encodeCanonical(st)]) {
      expect(decodeStoredRecord(bytes)).toEqual(st)
      expect(decodeStoredHead(bytes)).toMatchObject({ value: st.value, created: st.created, modified: st.modified, v: 42 })
    }
  })

  it('a space whose records are in both layouts opens to the same rows, records and state digest', async () => {
    const storage = new MemoryStorageAdapter()
    const d = await deps(1, storage)
    const a = await SpaceEngine.create(d, keyFor(1), { modules: DEFAULT_MODULES })
    const ids: string[] = []
    for (let i = 0; i < 6; i++) {
      const id = await a.createObject({ initialProperties: { core: { name: `object ${i}\nsecond line` } } })
      await a.write(id, [{ op: 'set', ds: 'notes', id: 'n1', path: 'text', value: `note ${i}` }])
      ids.push(id)
    }
    await a.deleteObject(ids[5])
    await a.settled()
    const digest = await a.replica.stateDigest()
    const rows = ids.map((id) => a.objectDoc(id))
    const notes = await Promise.all(ids.map((id) => a.replica.listRecords(id, 'notes')))
    // Every other record back in the whole-JSON layout of earlier builds.
    const stored = await storage.scan(STORES.records, { prefix: `${a.spaceId}/` })
    expect(stored.length).toBeGreaterThan(10)
    const puts = stored
      .filter((_, i) => i % 2 === 0)
      .map(([key, v]) => {
        expect(v[0]).toBe(0x01)
        return { store: STORES.records, key, value: new TextEncoder().encode(JSON.stringify(decodeStoredRecord(v))) }
      })
    await storage.commit({ puts, dels: [] })
    const b = await SpaceEngine.open({ ...d, storage }, a.spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    expect(await b.replica.stateDigest()).toBe(digest)
    expect(ids.map((id) => b.objectDoc(id))).toEqual(rows)
    expect(await Promise.all(ids.map((id) => b.replica.listRecords(id, 'notes')))).toEqual(notes)
    expect(await b.replica.getRecordsOf(ids, ROW_DS, ROW_ID)).toEqual(await a.replica.getRecordsOf(ids, ROW_DS, ROW_ID))
    // Writes still merge over records of either layout (the log is read whole where merge needs it).
    for (const id of ids.slice(0, 5)) await b.write(id, [{ op: 'set', ds: ROW_DS, id: ROW_ID, path: 'core.name', value: 'renamed' }])
    expect(ids.slice(0, 5).map((id) => (b.objectDoc(id)?.core as { name: string }).name)).toEqual(Array(5).fill('renamed'))
  })
})
