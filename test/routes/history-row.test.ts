import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, ok, type Booted } from './helpers.ts'

/**
 * The object's own fields (the row: dataset "" and id "") in history: listed as `datasets: [""]`,
 * readable through every history route under the alias `@row` (docs/api.md "Version history").
 */
let b: Booted
let S: string
let obj: string
let O: string
const v: string[] = []
beforeAll(async () => {
  b = await bootApp()
  S = `/v1/spaces/${(await ok(call(b.app, 'POST', '/v1/spaces', { name: 'H' }), 201)).id}`
  obj = (await ok(call(b.app, 'POST', `${S}/objects`, {}), 201)).objectId
  O = `${S}/objects/${obj}`
  for (const name of ['First', 'Second']) v.push((await ok(call(b.app, 'POST', `${S}/properties/${obj}/set/core`, { name }))).changeId)
})
afterAll(async () => b.close())

describe('history of the object fields', () => {
  it('lists the row as dataset "" and filters it by "@row"', async () => {
    const all = await ok(call(b.app, 'GET', `${O}/history`))
    const rows = all.changes.filter((c: any) => v.includes(c.version))
    expect(rows.map((c: any) => c.datasets)).toEqual([[''], ['']])
    expect(rows[0].recordIds).toEqual([{ dataset: '', id: '' }])
    const filtered = await ok(call(b.app, 'GET', `${O}/history?dataset=@row`))
    expect(filtered.changes.map((c: any) => c.version).slice(0, 2)).toEqual([v[1], v[0]])
    expect((await ok(call(b.app, 'GET', `${O}/history?dataset=@row&recordId=@row`))).changes.map((c: any) => c.version).slice(0, 2)).toEqual([v[1], v[0]])
  })

  it('reads the row at each version through the single-record route', async () => {
    const first = await ok(call(b.app, 'GET', `${O}/history/${v[0]}/datasets/@row/records/@row`))
    expect(first).toMatchObject({ exists: true, deleted: false, record: { core: { name: 'First' } } })
    const second = await ok(call(b.app, 'GET', `${O}/history/${v[1]}/datasets/@row/records/@row`))
    expect(second.record.core.name).toBe('Second')
    // Percent-encoded, as a client that encodes every segment sends it.
    expect((await ok(call(b.app, 'GET', `${O}/history/${v[1]}/datasets/%40row/records/%40row`))).record.core.name).toBe('Second')
  })

  it('views and diffs the row by its alias', async () => {
    const view = await ok(call(b.app, 'GET', `${O}/history/${v[0]}?dataset=@row`))
    expect(Object.keys(view.datasets)).toEqual([''])
    expect(view.datasets['']['']).toMatchObject({ core: { name: 'First' } })
    const diff = await ok(call(b.app, 'GET', `${O}/history/diff?version=${v[1]}&dataset=@row&recordIds=@row`))
    expect(diff.datasets[''][0]).toMatchObject({ id: '', before: { core: { name: 'First' } }, after: { core: { name: 'Second' } } })
  })

  it('setting a field to its current value adds no version; writing a dataset named @row is refused', async () => {
    const same = await ok(call(b.app, 'POST', `${S}/properties/${obj}/set/core`, { name: 'Second' }))
    // The properties route's recordIds name the object addressed; no change id means nothing was written.
    expect(same.changeId).toBe('')
    expect((await ok(call(b.app, 'GET', `${O}/history?dataset=@row`))).changes[0].version).toBe(v[1])
    expectError(
      await call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: '@row', records: [{ id: 'x', ops: [{ type: '$set', path: 'a', value: 1 }] }] }),
      400,
      'dataset.unknown',
    )
  })
})

describe('/modify that changes nothing', () => {
  it('an identical $set and an all-rejected write answer changeId "" and recordIds [], and add no version', async () => {
    const body = (ops: unknown[]) => ({ objectId: obj, dataset: 'notes', records: [{ id: 'n', ops }] })
    const first = await ok(call(b.app, 'POST', `${S}/modify`, body([{ type: '$set', path: 's', value: 'text' }])))
    expect(first.changeId).not.toBe('')
    const before = (await ok(call(b.app, 'GET', `${O}/history?dataset=notes`))).changes.length
    expect(await ok(call(b.app, 'POST', `${S}/modify`, body([{ type: '$set', path: 's', value: 'text' }])))).toMatchObject({ changeId: '', recordIds: [] })
    const rejected = await ok(call(b.app, 'POST', `${S}/modify`, body([{ type: '$inc', path: 's', value: 1 }])))
    expect(rejected).toMatchObject({ changeId: '', recordIds: [] })
    expect(rejected.rejections).toHaveLength(1)
    expect((await ok(call(b.app, 'GET', `${O}/history?dataset=notes`))).changes.length).toBe(before)
  })
})
