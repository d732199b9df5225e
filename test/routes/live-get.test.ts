import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, listen, newObject, newSpace, ok, openSse, type Booted, type Frame, type SseClient } from './helpers.ts'

/**
 * Issue 39 item 7: a browser's plain EventSource only sends GET, so every live query route has a
 * GET form, `?q=<the POST body's JSON>`, validated by the POST form's schema. Read over a real
 * socket as EventSource reads it (GET, text/event-stream); faults answer the same envelope as
 * the POST form.
 */
let b: Booted
let base: string
let sid: string
const open: SseClient[] = []

beforeAll(async () => {
  b = await bootApp()
  base = await listen(b.app)
  sid = await newSpace(b.app, 'live-get')
}, 30_000)
afterAll(async () => {
  for (const c of open) c.destroy()
  await b?.close()
})

const q = (body: unknown) => `?q=${encodeURIComponent(JSON.stringify(body))}`
const changes = (frames: Frame[]) => frames.filter((f) => f.event === 'changes').flatMap((f) => f.data as Array<Record<string, any>>)
const sse = async (url: string) => {
  const c = await openSse(url)
  open.push(c)
  await c.until((f) => f.some((x) => x.event === 'snapshot'))
  return c
}

describe('GET form of the live query routes', () => {
  it('objects: the snapshot and the changes frames the POST form sends', async () => {
    const a = await newObject(b.app, sid, { initialProperties: { core: { name: 'get-a', tags: ['g'] } } })
    const body = { filter: { 'core.tags': 'g' }, sort: ['core.name'], limit: 5 }
    const s = await sse(`${base}/v1/spaces/${sid}/objects/query/subscribe${q(body)}`)
    const snap = s.frames.find((f) => f.event === 'snapshot')!.data
    expect(snap).toEqual(await ok(call(b.app, 'POST', `/v1/spaces/${sid}/objects/query`, body)))
    expect(snap).toMatchObject({ records: [{ id: a }] })
    const c = await newObject(b.app, sid, { initialProperties: { core: { name: 'get-c', tags: ['g'] } } })
    await s.until((f) => changes(f).some((e) => e.added.some((x: { id: string }) => x.id === c)))
  })

  it("a dataset, the account's spaces and devices, and a files list open by GET too", async () => {
    const obj = await newObject(b.app, sid, { initialProperties: { core: { name: 'holder' } } })
    await ok(
      call(b.app, 'POST', `/v1/spaces/${sid}/modify`, {
        objectId: obj,
        dataset: 'todo',
        records: [{ id: 't1', upsert: true, ops: [{ type: '$set', path: 'text', value: 'milk' }] }],
      }),
    )
    const ds = await sse(`${base}/v1/spaces/${sid}/query/subscribe${q({ objectId: obj, dataset: 'todo', sort: ['id'] })}`)
    expect(ds.frames.find((f) => f.event === 'snapshot')!.data).toMatchObject({ records: [{ id: 't1', text: 'milk' }] })
    // No q: the body is {} (every default).
    const spaces = await sse(`${base}/v1/spaces/query/subscribe`)
    expect((spaces.frames.find((f) => f.event === 'snapshot')!.data as { records: Array<{ id: string }> }).records.map((r) => r.id)).toContain(sid)
    await sse(`${base}/v1/devices/query/subscribe${q({ limit: 5 })}`)
    await sse(`${base}/v1/spaces/${sid}/objects/${obj}/files/query/subscribe${q({ limit: 5 })}`)
  })

  it('bad q: not JSON is request.bad_json; a body fault answers what the POST form answers', async () => {
    const url = `/v1/spaces/${sid}/objects/query/subscribe`
    const notJson = await call(b.app, 'GET', `${url}?q=${encodeURIComponent('{filter:')}`)
    expect(notJson.statusCode).toBe(400)
    expect(notJson.json()).toMatchObject({ error: { code: 'request.bad_json' } })
    for (const body of [{ nope: 1 }, { limit: 'ten' }, [1, 2], { filter: { 'core.name': { $regex: 1 } } }]) {
      const get = await call(b.app, 'GET', `${url}${q(body)}`)
      const post = await call(b.app, 'POST', url, body)
      expect(get.statusCode, JSON.stringify(body)).toBe(400)
      expect(post.statusCode).toBe(400)
      expect(get.json().error.code).toBe(post.json().error.code)
    }
    const other = await call(b.app, 'GET', `${url}?q=%7B%7D&extra=1`)
    expect(other.statusCode).toBe(400)
    expect(other.json()).toMatchObject({ error: { code: 'request.unknown_field' } })
    for (const u of ['/v1/devices/query/subscribe', '/v1/spaces/query/subscribe', `/v1/spaces/${sid}/query/subscribe`]) {
      const r = await call(b.app, 'GET', `${u}${q({ limit: -1 })}`)
      expect(r.statusCode, u).toBe(400)
      expect(r.json().error.code).toMatch(/^request\./)
    }
  })
})
