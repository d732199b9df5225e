import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, listen, newObject, newSpace, ok, openSse, type Booted, type Frame } from './helpers.ts'

let b: Booted
let base: string
let spaceId: string
let S: string
beforeAll(async () => {
  b = await bootApp()
  base = await listen(b.app)
  spaceId = await newSpace(b.app)
  S = `/v1/spaces/${spaceId}`
})
afterAll(() => b.close())

const changes = (frames: Frame[]) => frames.filter((f) => f.event === 'changes').flatMap((f) => f.data as Array<Record<string, any>>)
const setCore = (objectId: string, values: Record<string, unknown>) => ok(call(b.app, 'POST', `${S}/properties/${objectId}/set/core`, values))

describe('live objects query', () => {
  it('ready, snapshot, then changes frames for an insert, an update, a filter-out and a delete', async () => {
    const a = await newObject(b.app, spaceId, { initialProperties: { core: { name: 'a', tags: ['live'] } } })
    const s = await openSse(`${base}${S}/objects/query/subscribe`, { filter: { 'core.tags': 'live' }, sort: ['core.name'], limit: 10, includeTotal: true })
    try {
      expect(s.res.statusCode).toBe(200)
      expect(s.res.headers['content-type']).toBe('text/event-stream; charset=utf-8')
      await s.until((f) => f.length >= 2)
      expect(s.frames[0]).toEqual({ event: 'ready', data: {} })
      expect(s.frames[1].event).toBe('snapshot')
      expect(s.frames[1].data).toMatchObject({ total: 1, hasNext: false, records: [{ id: a, core: { name: 'a' } }] })

      // insert
      const c = await newObject(b.app, spaceId, { initialProperties: { core: { name: 'c', tags: ['live'] } } })
      let seen = await s.until((f) => changes(f).some((e) => e.added.some((x: { id: string }) => x.id === c)))
      const insert = changes(seen).find((e) => e.added.length > 0)!
      expect(insert).toMatchObject({ versionId: expect.any(String), updated: [], removed: [] })
      expect(insert.added[0]).toMatchObject({ id: c, doc: { id: c, core: { name: 'c', tags: ['live'] } } })
      expect(insert.added[0].ops).toEqual(expect.arrayContaining([{ type: '$set', path: 'core.name', value: 'c' }]))

      // update
      await setCore(c, { description: 'edited' })
      seen = await s.until((f) => changes(f).some((e) => e.updated.some((x: { id: string }) => x.id === c)))
      const update = changes(seen).find((e) => e.updated.length > 0)!
      expect(update.updated[0]).toMatchObject({ id: c, doc: { core: { name: 'c', description: 'edited' } }, ops: [{ type: '$set', path: 'core.description', value: 'edited' }] })

      // filter-out
      await setCore(a, { tags: ['dead'] })
      seen = await s.until((f) => changes(f).some((e) => e.removed.some((x: { id: string }) => x.id === a)))
      expect(changes(seen).flatMap((e) => e.removed)).toContainEqual({ id: a, reason: 'filtered-out' })

      // delete
      await ok(call(b.app, 'DELETE', `${S}/objects/${c}`), 204)
      seen = await s.until((f) => changes(f).some((e) => e.removed.some((x: { id: string; reason: string }) => x.id === c && x.reason === 'deleted')))

      // a write elsewhere (not matching) makes no frame
      const before = changes(s.frames).length
      await newObject(b.app, spaceId, { initialProperties: { core: { name: 'other' } } })
      await new Promise((r) => setTimeout(r, 100))
      expect(changes(s.frames).length).toBe(before)
    } finally {
      s.destroy()
    }
  })

  it('displaced: a record pushed past the limit leaves the window', async () => {
    const sid = await newSpace(b.app, 'win')
    for (const name of ['b', 'c']) await newObject(b.app, sid, { initialProperties: { core: { name, tags: ['w'] } } })
    const s = await openSse(`${base}/v1/spaces/${sid}/objects/query/subscribe`, { filter: { 'core.tags': 'w' }, sort: ['core.name'], limit: 2, projection: { 'core.name': 1 } })
    try {
      await s.until((f) => f.some((x) => x.event === 'snapshot'))
      expect(s.frames[1].data.records.map((r: { core: { name: string } }) => r.core.name)).toEqual(['b', 'c'])
      const a = await newObject(b.app, sid, { initialProperties: { core: { name: 'a', tags: ['w'] } } })
      const seen = await s.until((f) => changes(f).some((e) => e.removed.length > 0))
      const frame = changes(seen).find((e) => e.removed.length > 0)!
      expect(frame.added).toEqual([{ id: a, doc: { id: a, core: { name: 'a' } }, ops: [{ type: '$set', path: 'core.name', value: 'a' }] }])
      expect(frame.removed).toEqual([{ id: expect.any(String), reason: 'displaced' }])
    } finally {
      s.destroy()
    }
  })
})

describe('live data plane query', () => {
  it('snapshot and changes of one object dataset; sdk_closed when the object is deleted', async () => {
    const obj = await newObject(b.app, spaceId)
    await ok(call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'rows', records: [{ id: 'r1', ops: [{ type: '$set', path: 'n', value: 1 }] }] }))
    const s = await openSse(`${base}${S}/query/subscribe`, { objectId: obj, dataset: 'rows', sort: ['id'], limit: 50 })
    try {
      await s.until((f) => f.some((x) => x.event === 'snapshot'))
      expect(s.frames[1].data).toEqual({ records: [{ id: 'r1', n: 1, _ver: { id: expect.any(String) } }] })
      await ok(
        call(b.app, 'POST', `${S}/modify`, {
          objectId: obj,
          dataset: 'rows',
          records: [
            { id: 'r2', ops: [{ type: '$set', path: '', value: { n: 2 } }] },
            { id: 'r1', ops: [{ type: '$inc', path: 'n', value: 5 }] },
          ],
        }),
      )
      const seen = await s.until((f) => changes(f).length > 0)
      const frame = changes(seen)[0]
      expect(frame.added).toEqual([{ id: 'r2', doc: { id: 'r2', n: 2, _ver: { id: expect.any(String) } }, ops: [{ type: '$set', path: '', value: { n: 2 } }] }])
      expect(frame.updated).toEqual([{ id: 'r1', doc: { id: 'r1', n: 6, _ver: { id: expect.any(String) } }, ops: [{ type: '$set', path: 'n', value: 6 }] }])
      // Writes to another dataset of the object do not reach this stream.
      await ok(call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'other', records: [{ id: 'x', ops: [{ type: '$set', path: 'v', value: 1 }] }] }))
      await ok(call(b.app, 'POST', `${S}/delete-records`, { objectId: obj, dataset: 'rows', recordIds: ['r2'] }))
      await s.until((f) => changes(f).some((e) => e.removed.some((x: { id: string }) => x.id === 'r2')))
      expect(changes(s.frames).flatMap((e) => e.removed)).toEqual([{ id: 'r2', reason: 'deleted' }])

      await ok(call(b.app, 'DELETE', `${S}/objects/${obj}`), 204)
      await s.ended
      expect(changes(s.frames).flatMap((e) => e.removed)).toEqual([
        { id: 'r2', reason: 'deleted' },
        { id: 'r1', reason: 'deleted' },
      ])
      expect(s.frames.at(-1)).toEqual({ event: 'closed', data: { reason: 'sdk_closed' } })
    } finally {
      s.destroy()
    }
  })

  it('drifted: the window falls short beyond driftBudgetPercent and the stream closes', async () => {
    const obj = await newObject(b.app, spaceId)
    const ids = Array.from({ length: 40 }, (_, i) => `r${String(i).padStart(2, '0')}`)
    await ok(call(b.app, 'POST', `${S}/modify`, { objectId: obj, dataset: 'many', records: ids.map((id) => ({ id, ops: [{ type: '$set', path: 'v', value: id }] })) }))
    const s = await openSse(`${base}${S}/query/subscribe`, { objectId: obj, dataset: 'many', sort: ['id'], limit: 4, driftBudgetPercent: 30 })
    try {
      await s.until((f) => f.some((x) => x.event === 'snapshot'))
      expect(s.frames[1].data.records.map((r: { id: string }) => r.id)).toEqual(ids.slice(0, 4))
      // The window holds limit + reserve (16) = 20 records; deleting them leaves it short.
      await ok(call(b.app, 'POST', `${S}/delete-records`, { objectId: obj, dataset: 'many', recordIds: ids.slice(0, 20) }))
      await s.ended
      expect(s.frames.at(-1)).toEqual({ event: 'closed', data: { reason: 'drifted' } })
      expect(changes(s.frames)[0].removed.map((r: { reason: string }) => r.reason)).toEqual(['deleted', 'deleted', 'deleted', 'deleted'])
    } finally {
      s.destroy()
    }
  })
})

describe('live spaces query', () => {
  it('tech-space rows: a created space arrives as added, a deleted one as updated with status deleted', async () => {
    const s = await openSse(`${base}/v1/spaces/query/subscribe`, { dataset: 'spaces', limit: 100 })
    try {
      await s.until((f) => f.some((x) => x.event === 'snapshot'))
      const id = await newSpace(b.app, 'live')
      await s.until((f) => changes(f).some((e) => e.added.some((x: { id: string }) => x.id === id)))
      await ok(call(b.app, 'DELETE', `/v1/spaces/${id}`), 204)
      const seen = await s.until((f) => changes(f).some((e) => e.updated.some((x: { id: string }) => x.id === id)))
      const upd = changes(seen)
        .flatMap((e) => e.updated)
        .find((x: { id: string }) => x.id === id)
      expect(upd.doc).toMatchObject({ id, status: 'deleted', deletedAt: { $date: expect.any(String) } })
      expect(upd.ops).toEqual([{ type: '$set', path: 'deletedAt', value: { $date: expect.any(String) } }])
    } finally {
      s.destroy()
    }
  })
})

describe('stream endings', () => {
  it('overflow: a reader that stops reading is closed once mailboxCapacity frames wait', async () => {
    const c = await bootApp()
    try {
      const url = await listen(c.app)
      const sid = await newSpace(c.app)
      const obj = await newObject(c.app, sid)
      const s = await openSse(`${url}/v1/spaces/${sid}/query/subscribe`, { objectId: obj, dataset: 'big', mailboxCapacity: 16, limit: 10 })
      await s.until((f) => f.some((x) => x.event === 'snapshot'))
      s.pause()
      const blob = 'x'.repeat(256 * 1024)
      let writes = 0
      while (c.app.sse.size > 0 && writes < 400) {
        await ok(
          call(c.app, 'POST', `/v1/spaces/${sid}/modify`, { objectId: obj, dataset: 'big', records: [{ id: 'r', ops: [{ type: '$set', path: 'v', value: `${writes}${blob}` }] }] }),
        )
        writes++
      }
      expect(c.app.sse.size).toBe(0)
      s.resume()
      await s.ended
      expect(s.frames.at(-1)).toEqual({ event: 'closed', data: { reason: 'overflow' } })
    } finally {
      await c.close()
    }
  })

  it('deauthorized when the account is torn down in place (managed sign-out)', async () => {
    const c = await bootApp({ controlToken: 'tok' })
    try {
      const url = await listen(c.app)
      const sid = await newSpace(c.app)
      const s = await openSse(`${url}/v1/spaces/${sid}/query/subscribe`, { objectId: await newObject(c.app, sid), dataset: 'd', limit: 5 })
      await s.until((f) => f.some((x) => x.event === 'snapshot'))
      const res = await c.app.inject({ method: 'DELETE', url: '/v1/auth', headers: { 'x-svc-control-token': 'tok' } })
      expect(res.statusCode).toBe(204)
      await s.ended
      expect(s.frames.at(-1)).toEqual({ event: 'closed', data: { reason: 'deauthorized' } })
      expect((await call(c.app, 'GET', `/v1/spaces/${sid}`)).statusCode).toBe(401)
    } finally {
      await c.close()
    }
  })

  it('server_shutdown when the app closes', async () => {
    const c = await bootApp()
    const url = await listen(c.app)
    const sid = await newSpace(c.app)
    const s = await openSse(`${url}/v1/spaces/${sid}/objects/query/subscribe`, { limit: 5 })
    await s.until((f) => f.some((x) => x.event === 'snapshot'))
    await c.close()
    await s.ended
    expect(s.frames.map((f) => f.event)).toEqual(['ready', 'snapshot', 'closed'])
    expect(s.frames.at(-1)!.data).toEqual({ reason: 'server_shutdown' })
  })
})
