import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, ok, type Booted } from './helpers.ts'

let b: Booted
let O: string
const v: string[] = []
beforeAll(async () => {
  b = await bootApp()
  const S = `/v1/spaces/${(await ok(call(b.app, 'POST', '/v1/spaces', { name: 'H' }), 201)).id}`
  const obj = (await ok(call(b.app, 'POST', `${S}/objects`, {}), 201)).objectId
  O = `${S}/objects/${obj}`
  for (let i = 0; i < 3; i++) {
    v.push(
      (await ok(call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'notes', records: [{ id: 'n', ops: [{ type: '$set', path: 'i', value: i }] }], traceIds: [`t${i}`] })))
        .changeId,
    )
  }
})
afterAll(async () => b.close())

describe('version history routes', () => {
  it('lists, pages, filters, diffs, views a version and a record at it', async () => {
    const all = await ok(call(b.app, 'GET', `${O}/history?dataset=notes`))
    expect(all.changes.map((c: any) => c.version)).toEqual([...v].reverse())
    const page = await ok(call(b.app, 'GET', `${O}/history?dataset=notes&limit=2`))
    expect(page.changes).toHaveLength(2)
    const next = await ok(call(b.app, 'GET', `${O}/history?dataset=notes&limit=2&cursor=${page.cursor}`))
    expect(next.changes.map((c: any) => c.version)).toEqual([v[0]])
    expect((await ok(call(b.app, 'GET', `${O}/history?traceId=t1`))).changes.map((c: any) => c.version)).toEqual([v[1]])
    expect((await ok(call(b.app, 'GET', `${O}/history?coalesce=true&dataset=notes`))).changes).toHaveLength(1)
    expect(await ok(call(b.app, 'GET', `${O}/history/diff?version=${v[1]}`))).toEqual({
      base: null,
      version: v[1],
      datasets: { notes: [{ id: 'n', before: { i: 0 }, after: { i: 1 } }] },
    })
    expect((await ok(call(b.app, 'GET', `${O}/history/${v[0]}?dataset=notes`))).datasets).toEqual({ notes: { n: { i: 0 } } })
    expect(await ok(call(b.app, 'GET', `${O}/history/${v[2]}/datasets/notes/records/n`))).toEqual({ exists: true, deleted: false, record: { i: 2 } })
  })

  it('a tombstoned record at a version: deleted, and its full form carries `_deletedAt`', async () => {
    const S = O.slice(0, O.indexOf('/objects/'))
    const objectId = O.slice(O.lastIndexOf('/') + 1)
    await ok(call(b.app, 'POST', `${S}/modify`, { objectId, dataset: 'gone', records: [{ id: 'g', ops: [{ type: '$set', path: 'x', value: 1 }] }] }))
    const before = Date.now()
    const del = await ok(call(b.app, 'POST', `${S}/delete-records`, { objectId, dataset: 'gone', recordIds: ['g'] }))
    const at = await ok(call(b.app, 'GET', `${O}/history/${del.changeId}/datasets/gone/records/g`))
    expect(at).toEqual({ exists: true, deleted: true, record: { _deletedAt: { $date: expect.any(String) } } })
    expect(Date.parse(at.record._deletedAt.$date)).toBeGreaterThanOrEqual(before - 1000)
  })

  it('errors: unknown version 404, limit below 1 and unknown query keys 400', async () => {
    expectError(await call(b.app, 'GET', `${O}/history/nope`), 404, 'history.version_not_found')
    expectError(await call(b.app, 'GET', `${O}/history/diff?version=nope`), 404, 'history.version_not_found')
    const under = await call(b.app, 'GET', `${O}/history?limit=0`)
    expect(under.statusCode).toBe(400)
    expect(under.json().error.code).toMatch(/^request\./)
    expect((await call(b.app, 'GET', `${O}/history?bogus=1`)).statusCode).toBe(400)
  })

  it('limit: default 50, a larger one than 200 is capped at 200 (spec Limits), not refused', async () => {
    const S = O.slice(0, O.indexOf('/objects/'))
    const objectId = (await ok(call(b.app, 'POST', `${S}/objects`, {}), 201)).objectId
    for (let i = 0; i < 205; i++) await ok(call(b.app, 'POST', `${S}/modify`, { objectId, dataset: 'many', records: [{ id: 'm', ops: [{ type: '$set', path: 'i', value: i }] }] }))
    const H = `${S}/objects/${objectId}/history?dataset=many`
    expect((await ok(call(b.app, 'GET', H))).changes).toHaveLength(50)
    const capped = await ok(call(b.app, 'GET', `${H}&limit=1000`))
    expect(capped.changes).toHaveLength(200)
    expect(capped.cursor).toEqual(expect.any(String))
    expect((await ok(call(b.app, 'GET', `${H}&limit=1000&cursor=${capped.cursor}`))).changes).toHaveLength(5)
  })

  it('413 history.view_too_large: a version holding more than 5,000 live records; a dataset filter that fits answers', async () => {
    const S = O.slice(0, O.indexOf('/objects/'))
    const objectId = (await ok(call(b.app, 'POST', `${S}/objects`, {}), 201)).objectId
    await ok(call(b.app, 'POST', `${S}/modify`, { objectId, dataset: 'small', records: [{ id: 's', ops: [{ type: '$set', path: 'x', value: 1 }] }] }))
    const records = Array.from({ length: 5_001 }, (_, i) => ({ id: `r${i}`, ops: [{ type: '$set', path: 'v', value: i }] }))
    const big = await ok(call(b.app, 'POST', `${S}/modify`, { objectId, dataset: 'bulk', records }))
    const V = `${S}/objects/${objectId}/history/${big.changeId}`
    expect(expectError(await call(b.app, 'GET', V), 413, 'history.view_too_large')).toMatchObject({ limit: 5_000 })
    expectError(await call(b.app, 'GET', `${V}?dataset=bulk`), 413, 'history.view_too_large')
    expect((await ok(call(b.app, 'GET', `${V}?dataset=small`))).datasets).toEqual({ small: { s: { x: 1 } } })
  })
})
