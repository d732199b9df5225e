import { describe, expect, it } from 'vitest'
import { expectCode, newSpace, twoMembers } from './helpers.ts'

const FIELDS = {
  title: { type: 'string', required: true, mutableBy: 'any' },
  sku: { type: 'string' }, // write-once
  note: { type: 'string', mutableBy: 'author' },
  n: { type: 'integer', mutableBy: 'any' },
  at: { type: 'datetime', mutableBy: 'any' },
}

async function setup(draft: Record<string, unknown> = { idRule: 'user', idPattern: '[a-z0-9-]+', idMaxLen: 8, fields: FIELDS }) {
  const s = await newSpace()
  const t = await s.svc.createType({ xKey: 'catalog' })
  const { datasets } = await s.svc.createPart(t.id, { key: 'items', datasets: [draft] })
  const obj = await s.engine.createObject({ types: [t.id] })
  await s.engine.settled()
  const ds = datasets[0].collection
  const docs = async () => Object.fromEntries((await s.engine.datasetDocs(obj, ds)).map(({ id, _ver: _v, ...rest }) => [id, rest]))
  return { ...s, typeId: t.id, obj, ds, docs }
}

describe('upsert: request errors', () => {
  it('unknown dataset, non-user ids, object not carrying the owning type, missing object', async () => {
    const { svc, engine, typeId, obj, ds } = await setup()
    await expectCode(svc.upsert({ objectId: obj, dataset: 'nope', records: [] }), 'dataset.unknown', { dataset: 'nope' })
    const auto = await svc.createPart(typeId, { key: 'auto', datasets: [{}] })
    await expectCode(svc.upsert({ objectId: obj, dataset: auto.datasets[0].collection, records: [] }), 'upsert.requires_user_ids')
    await svc.createPart(typeId, { key: 'ed', datasets: [{ module: 'editor', shared: true }] })
    await expectCode(svc.upsert({ objectId: obj, dataset: 'editor_blocks', records: [] }), 'upsert.requires_user_ids')
    const plain = await engine.createObject({ types: [] })
    await engine.settled()
    await expectCode(svc.upsert({ objectId: plain, dataset: ds, records: [] }), 'dataset.not_declared', { dataset: ds, objectId: plain })
    await expectCode(svc.upsert({ objectId: 'missing', dataset: ds, records: [] }), 'object.not_found')
    await expectCode(svc.upsert({ dataset: ds, records: [] }), 'object.id_required')
    await expectCode(svc.upsert({ objectId: obj, dataset: ds, records: 'x' }), 'request.invalid_field', { field: 'records' })
    await expectCode(svc.upsert({ objectId: obj, dataset: ds, records: [], pageSize: 0 }), 'request.invalid_field', { field: 'pageSize' })
    await expectCode(svc.upsert({ objectId: obj, dataset: ds, records: [], traceIds: [1] }), 'request.invalid_field', { field: 'traceIds' })
    expect(await svc.upsert({ objectId: obj, dataset: ds, records: [] })).toEqual({ pages: [], created: 0, updated: 0, skipped: 0, rejections: [] })
  })
})

describe('upsert: per-record rules', () => {
  it('absent id: created in one multi-field set; present: changed fields as single-path sets; identical: skipped', async () => {
    const { svc, engine, obj, ds, docs } = await setup()
    const r1 = await svc.upsert({
      objectId: obj,
      dataset: ds,
      records: [
        { id: 'a', fields: { title: 'A', sku: 's1', n: 1 } },
        { id: 'b', fields: { title: 'B' } },
      ],
      traceIds: ['t1'],
    })
    expect(r1).toMatchObject({ created: 2, updated: 0, skipped: 0, rejections: [] })
    expect(r1.pages).toHaveLength(1)
    expect(r1.pages[0].recordIds).toEqual(['a', 'b'])
    // the page's change carried traceIds: the full form names them (`_traces`)
    expect(await docs()).toEqual({ a: { title: 'A', sku: 's1', n: 1, _traces: ['t1'] }, b: { title: 'B', _traces: ['t1'] } })

    const seen: Array<{ path: string }[]> = []
    const off = engine.events.on('change', (c) => {
      const perDs = c.records.get(obj)?.get(ds)
      if (perDs) for (const ops of perDs.values()) seen.push(ops)
    })
    const r2 = await svc.upsert({
      objectId: obj,
      dataset: ds,
      records: [
        { id: 'a', fields: { title: 'A2', sku: 's1', n: 1 } },
        { id: 'b', fields: { title: 'B' } },
      ],
    })
    await engine.settled()
    off()
    expect(r2).toMatchObject({ created: 0, updated: 1, skipped: 1, rejections: [] })
    expect(r2.pages.map((p) => p.recordIds)).toEqual([['a']])
    expect(seen).toEqual([[{ type: '$set', path: 'title', value: 'A2' }]])
    // a skipped record keeps the traces of the change that last wrote it
    expect(await docs()).toEqual({ a: { title: 'A2', sku: 's1', n: 1 }, b: { title: 'B', _traces: ['t1'] } })

    // Identical everywhere: nothing written, no page.
    const r3 = await svc.upsert({ objectId: obj, dataset: ds, records: [{ id: 'a', fields: { title: 'A2' } }] })
    expect(r3).toEqual({ pages: [], created: 0, updated: 0, skipped: 1, rejections: [] })
    // Fields left out are kept; a write-once field may be filled once while absent.
    await svc.upsert({ objectId: obj, dataset: ds, records: [{ id: 'b', fields: { sku: 'late' } }] })
    expect((await docs()).b).toEqual({ title: 'B', sku: 'late' })
  })

  it('write-once fields are compared, never rewritten: upsert.immutable_field', async () => {
    const { svc, obj, ds, docs } = await setup()
    await svc.upsert({ objectId: obj, dataset: ds, records: [{ id: 'a', fields: { title: 'A', sku: 's1' } }] })
    const r = await svc.upsert({
      objectId: obj,
      dataset: ds,
      records: [
        { id: 'a', fields: { title: 'changed', sku: 's2' } },
        { id: 'a', fields: { sku: 's1', title: 'ok' } },
      ],
    })
    expect(r.rejections).toEqual([{ index: 0, id: 'a', code: 'upsert.immutable_field', reason: expect.stringContaining('sku') }])
    expect(r).toMatchObject({ updated: 1 })
    expect((await docs()).a).toEqual({ title: 'ok', sku: 's1' })
  })

  it('tombstoned id: upsert.record_deleted', async () => {
    const { svc, engine, obj, ds } = await setup()
    await svc.upsert({ objectId: obj, dataset: ds, records: [{ id: 'a', fields: { title: 'A' } }] })
    await engine.deleteRecords({ objectId: obj, dataset: ds, recordIds: ['a'] })
    const r = await svc.upsert({ objectId: obj, dataset: ds, records: [{ id: 'a', fields: { title: 'again' } }] })
    expect(r).toMatchObject({ created: 0, updated: 0, rejections: [{ index: 0, id: 'a', code: 'upsert.record_deleted' }] })
  })

  it('creation screening: upsert.rejected for missing required field, id pattern or length, undeclared or stamped field, bad types', async () => {
    const { svc, obj, ds, docs } = await setup()
    const records = [
      { id: 'ok', fields: { title: 'fine' } },
      { id: 'x1', fields: { sku: 'no title' } },
      { id: 'UPPER', fields: { title: 't' } },
      { id: 'waytoolong', fields: { title: 't' } },
      { id: 'u1', fields: { title: 't', color: 'red' } },
      { id: 's1', fields: { title: 't', _ver: 'x' } },
      { id: 's2', fields: { title: 't', id: 'other' } },
      { id: 't1', fields: { title: 5 } },
      { id: 't2', fields: { title: 't', n: 1.5 } },
      { id: 't3', fields: { title: 't', at: '2024-01-01' } },
      { id: 'f1', fields: 'x' },
      { id: '', fields: { title: 't' } },
      { fields: { title: 't' } },
      'junk',
      { id: 'nl', fields: { title: null } },
    ]
    const r = await svc.upsert({ objectId: obj, dataset: ds, records })
    expect(r.created).toBe(1)
    expect(r.rejections.map((x) => [x.index, x.code])).toEqual(records.slice(1).map((_, i) => [i + 1, 'upsert.rejected']))
    for (const x of r.rejections) expect(x.reason).toBeTypeOf('string')
    expect(Object.keys(await docs())).toEqual(['ok'])
    // Updates are screened the same way for undeclared and stamped fields.
    const u = await svc.upsert({
      objectId: obj,
      dataset: ds,
      records: [
        { id: 'ok', fields: { color: 'x' } },
        { id: 'ok', fields: { _ver: 'x' } },
      ],
    })
    expect(u.rejections.map((x) => x.code)).toEqual(['upsert.rejected', 'upsert.rejected'])
  })

  it('dynamic datasets accept undeclared fields (mutable by anyone); ids without a pattern up to 256 chars', async () => {
    const { svc, obj, ds, docs } = await setup({ idRule: 'user', dynamic: true, fields: { title: { type: 'string' } } })
    const long = 'x'.repeat(256)
    const r = await svc.upsert({
      objectId: obj,
      dataset: ds,
      records: [
        { id: long, fields: { title: 't', extra: { deep: [1] } } },
        { id: long + 'y', fields: {} },
      ],
    })
    expect(r.rejections.map((x) => x.index)).toEqual([1])
    await svc.upsert({ objectId: obj, dataset: ds, records: [{ id: long, fields: { extra: 2 } }] })
    expect((await docs())[long]).toEqual({ title: 't', extra: 2 })
  })

  it('pageSize: one change per page; default 500', async () => {
    const { svc, obj, ds, docs } = await setup({ idRule: 'user', fields: { title: { type: 'string' } } })
    const records = Array.from({ length: 7 }, (_, i) => ({ id: `r${i}`, fields: { title: `t${i}` } }))
    const r = await svc.upsert({ objectId: obj, dataset: ds, records, pageSize: 3 })
    expect(r.pages.map((p) => p.recordIds)).toEqual([['r0', 'r1', 'r2'], ['r3', 'r4', 'r5'], ['r6']])
    expect(new Set(r.pages.map((p) => p.changeId)).size).toBe(3)
    expect(Object.keys(await docs())).toHaveLength(7)
    const big = Array.from({ length: 501 }, (_, i) => ({ id: `b${i}`, fields: { title: 'x' } }))
    const r2 = await svc.upsert({ objectId: obj, dataset: ds, records: big })
    expect(r2.pages.map((p) => p.recordIds.length)).toEqual([500, 1])
    expect(r2.created).toBe(501)
  })

  it('upsert.not_author: a mutableBy author field changes only by the record creator', async () => {
    const { a, b, svcA, svcB, sync } = await twoMembers()
    const t = await svcA.createType({ xKey: 'c' })
    const { datasets } = await svcA.createPart(t.id, { key: 'items', datasets: [{ idRule: 'user', fields: FIELDS }] })
    const obj = await a.createObject({ types: [t.id] })
    await a.settled()
    const ds = datasets[0].collection
    await svcA.upsert({ objectId: obj, dataset: ds, records: [{ id: 'a', fields: { title: 'A', note: 'mine' } }] })
    await sync()
    const r = await svcB.upsert({
      objectId: obj,
      dataset: ds,
      records: [
        { id: 'a', fields: { note: 'theirs' } },
        { id: 'a', fields: { title: 'B edits title', note: 'mine' } },
      ],
    })
    expect(r.rejections).toEqual([{ index: 0, id: 'a', code: 'upsert.not_author', reason: expect.any(String) }])
    expect(r.updated).toBe(1)
    // A record the writer created itself is theirs to change.
    await svcB.upsert({ objectId: obj, dataset: ds, records: [{ id: 'b', fields: { title: 'B', note: 'x' } }] })
    const r2 = await svcB.upsert({ objectId: obj, dataset: ds, records: [{ id: 'b', fields: { note: 'y' } }] })
    expect(r2).toMatchObject({ updated: 1, rejections: [] })
    const own = await svcA.upsert({ objectId: obj, dataset: ds, records: [{ id: 'a', fields: { note: 'edited' } }] })
    expect(own).toMatchObject({ updated: 1, rejections: [] })
    await sync()
    expect((await b.datasetDocs(obj, ds)).map((d) => [d.id, d.title, d.note])).toEqual([
      ['a', 'B edits title', 'edited'],
      ['b', 'B', 'y'],
    ])
  })
})
