import { randomBytes } from 'node:crypto'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SERVER_MODULES } from '../../server/modules/index.ts'
import { makeFilesServerModule } from '../../server/modules/files.ts'
import { bootApp, call, expectError, listen, newObject, newSpace, ok, openSse, type Booted } from './helpers.ts'

/*
 * Files routes (spec core.md "Files", "Files cache"; docs/api.md "Files"): attach inline and
 * blocked, list, info, status, stats, download with every Range edge, variants, delete and the
 * sweep, pin, offload, cache size and free, the status stream and the per-object live query.
 * Blocks are shrunk to 4 KiB and the attach limit to 3 MiB so files of many blocks stay small;
 * grace is zero so a sweep deletes what it finds unreferenced.
 */
const BLOCK = 4096
const modules = SERVER_MODULES.map((m) => (m.name === 'files' ? makeFilesServerModule({ blockSize: BLOCK, attachMax: 3 * 1024 * 1024, graceMs: 0 }) : m))

let a: Booted
let spaceId: string
let objectId: string
let S: string

beforeAll(async () => {
  a = await bootApp({ modules })
  spaceId = await newSpace(a.app, 'Files')
  objectId = await newObject(a.app, spaceId)
  S = `/v1/spaces/${spaceId}`
}, 60_000)
afterAll(async () => {
  await a?.close()
})

const attach = (bytes: Uint8Array, query = 'name=f.bin', obj = objectId, contentType = 'application/octet-stream') =>
  a.app.inject({ method: 'POST', url: `${S}/objects/${obj}/files?${query}`, payload: Buffer.from(bytes), headers: { 'content-type': contentType } })
const attached = async (bytes: Uint8Array, query?: string) =>
  ok<{ fileId: string; inline: boolean; hash: string; size: number; uri: string; recordIds: string[] }>(attach(bytes, query), 201)
const download = (fileId: string, range?: string, query = '') => a.app.inject({ method: 'GET', url: `${S}/files/${fileId}/content${query}`, headers: range ? { range } : {} })
const cacheSize = async () => (await ok<{ size: number }>(call(a.app, 'GET', '/v1/files/cache'))).size

describe('attach', () => {
  it('keeps a small file inline: its bytes sit in the record, no block is stored', async () => {
    const before = await cacheSize()
    const bytes = randomBytes(1000)
    const res = await attached(bytes, 'name=note.txt&mime=text/plain')
    expect(res).toMatchObject({ inline: true, size: 1000, uri: `svc://f/${spaceId}/${res.fileId}`, recordIds: [res.fileId] })
    expect(await cacheSize()).toBe(before)
    const info = await ok(call(a.app, 'GET', `${S}/files/${res.fileId}`))
    expect(info).toMatchObject({
      id: res.fileId,
      objectId,
      name: 'note.txt',
      mime: 'text/plain',
      size: 1000,
      inline: true,
      blocks: 0,
      cached: true,
      state: 'durable',
      creator: a.accountId,
    })
  })

  it('cuts a larger file into sealed blocks: none holds the plaintext, and the file reads back byte for byte', async () => {
    const bytes = randomBytes(BLOCK * 20 + 123)
    const before = await cacheSize()
    const res = await attached(bytes)
    expect(res.inline).toBe(false)
    const info = await ok(call(a.app, 'GET', `${S}/files/${res.fileId}`))
    expect(info).toMatchObject({ inline: false, blocks: 21, cachedBlocks: 21, cached: true, state: 'inflight', size: bytes.length })
    // Each block is its plaintext plus a 16-byte tag.
    expect((await cacheSize()) - before).toBe(bytes.length + 21 * 16)
    const got = await download(res.fileId)
    expect(got.statusCode).toBe(200)
    expect(got.headers['accept-ranges']).toBe('bytes')
    expect(Number(got.headers['content-length'])).toBe(bytes.length)
    expect(Buffer.compare(got.rawPayload, bytes)).toBe(0)
  })

  it('deduplicates within the space: equal content stores no new block and has the same content id', async () => {
    const bytes = randomBytes(BLOCK * 5)
    const first = await attached(bytes)
    const size = await cacheSize()
    const second = await attached(bytes, 'name=copy.bin')
    expect(second.fileId).not.toBe(first.fileId)
    expect(second.hash).toBe(first.hash)
    expect(await cacheSize()).toBe(size)
  })

  it('keys content per space: the same bytes in another space have another content id', async () => {
    const other = await newSpace(a.app, 'Other')
    const obj = await newObject(a.app, other)
    const bytes = randomBytes(BLOCK * 2)
    const here = await attached(bytes)
    const there = await ok(
      a.app.inject({
        method: 'POST',
        url: `/v1/spaces/${other}/objects/${obj}/files?name=x`,
        payload: Buffer.from(bytes),
        headers: { 'content-type': 'application/octet-stream' },
      }),
      201,
    )
    expect(there.hash).not.toBe(here.hash)
  })

  it('takes a body past 1 MB (the JSON limit) up to its own limit, and 413 file.too_large past it', async () => {
    const res = await attached(randomBytes(2 * 1024 * 1024))
    expect(res.size).toBe(2 * 1024 * 1024)
    expectError(await attach(randomBytes(3 * 1024 * 1024 + 1)), 413, 'file.too_large')
  })

  it('refuses bad input with the envelope: wrong content type, missing name, bad mime, unknown object, unknown space', async () => {
    expectError(await attach(randomBytes(10), 'name=a', objectId, 'text/csv'), 415, 'request.unsupported_media_type')
    expectError(await attach(new TextEncoder().encode('{"a":1}'), 'name=a', objectId, 'application/json'), 400, 'request.invalid_field')
    expectError(await attach(randomBytes(10), 'mime=text/plain'), 400, 'request.missing_field')
    expectError(await attach(randomBytes(10), 'name=a&mime=nonsense'), 400, 'request.invalid_field')
    expectError(await attach(randomBytes(10), 'name=a&color=red'), 400, 'request.unknown_field')
    expectError(await attach(randomBytes(10), 'name=a', 'nope'), 404, 'object.not_found')
    expectError(
      await a.app.inject({
        method: 'POST',
        url: `/v1/spaces/nope/objects/${objectId}/files?name=a`,
        payload: Buffer.from('x'),
        headers: { 'content-type': 'application/octet-stream' },
      }),
      404,
      'space.not_found',
    )
  })
})

describe('download with Range', () => {
  const bytes = randomBytes(BLOCK * 8 + 500)
  let blocked: string
  let inline: string
  const small = randomBytes(300)
  beforeAll(async () => {
    blocked = (await attached(bytes)).fileId
    inline = (await attached(small)).fileId
  })

  for (const kind of ['blocked', 'inline'] as const) {
    const src = () => (kind === 'blocked' ? bytes : small)
    const id = () => (kind === 'blocked' ? blocked : inline)
    it(`${kind}: 206 with Content-Range for a middle range, an open end and a suffix`, async () => {
      const n = src().length
      for (const [range, start, end] of [
        [`bytes=100-${n - 100}`, 100, n - 100],
        ['bytes=7-', 7, n - 1],
        ['bytes=-50', n - 50, n - 1],
        [`bytes=0-${n + 1000}`, 0, n - 1],
        [`bytes=${n - 1}-${n - 1}`, n - 1, n - 1],
      ] as const) {
        const res = await download(id(), range)
        expect(res.statusCode, range).toBe(206)
        expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${n}`)
        expect(Number(res.headers['content-length'])).toBe(end - start + 1)
        expect(Buffer.compare(res.rawPayload, src().subarray(start, end + 1)), range).toBe(0)
      }
    })

    it(`${kind}: 416 with Content-Range bytes */size for a range past the end, a reversed, malformed or multiple range`, async () => {
      const n = src().length
      for (const range of [`bytes=${n}-`, `bytes=${n + 5}-${n + 9}`, 'bytes=9-3', 'bytes=abc', 'items=0-5', 'bytes=0-1,5-9', 'bytes=-0', 'bytes=-']) {
        const res = await download(id(), range)
        expect(res.statusCode, range).toBe(416)
        expect(res.headers['content-range']).toBe(`bytes */${n}`)
        expect(res.json().error.code).toBe('request.invalid_field')
      }
    })
  }

  it('a range spanning block boundaries reads exactly the bytes asked for', async () => {
    const res = await download(blocked, `bytes=${BLOCK - 3}-${3 * BLOCK + 2}`)
    expect(Buffer.compare(res.rawPayload, bytes.subarray(BLOCK - 3, 3 * BLOCK + 3))).toBe(0)
  })

  it('an empty file downloads as zero bytes and refuses every range', async () => {
    const { fileId, inline: isInline } = await attached(new Uint8Array(0))
    expect(isInline).toBe(true)
    const res = await download(fileId)
    expect(res.statusCode).toBe(200)
    expect(res.rawPayload.length).toBe(0)
    expect((await download(fileId, 'bytes=0-')).statusCode).toBe(416)
  })

  it('404 file.not_found for an unknown file', async () => {
    expectError(await download('nope'), 404, 'file.not_found')
    expectError(await call(a.app, 'GET', `${S}/files/nope`), 404, 'file.not_found')
    expectError(await call(a.app, 'GET', `${S}/files/nope/status`), 404, 'file.not_found')
  })
})

describe('list, status, stats', () => {
  it('lists files of the space and of one object, by file id', async () => {
    const other = await newObject(a.app, spaceId)
    const res = await ok(
      a.app.inject({
        method: 'POST',
        url: `${S}/objects/${other}/files?name=there.txt&mime=text/plain`,
        payload: Buffer.from('hello'),
        headers: { 'content-type': 'application/octet-stream' },
      }),
      201,
    )
    const all = (await ok(call(a.app, 'GET', `${S}/files`))).files
    expect(all.map((f: any) => f.id)).toEqual([...all.map((f: any) => f.id)].sort())
    expect(all.some((f: any) => f.id === res.fileId)).toBe(true)
    const one = (await ok(call(a.app, 'GET', `${S}/files?objectId=${other}`))).files
    expect(one.map((f: any) => f.id)).toEqual([res.fileId])
  })

  it('status is the frame body: inline durable, blocked inflight until a peer confirms', async () => {
    const i = await attached(randomBytes(10))
    const b = await attached(randomBytes(BLOCK * 2))
    expect(await ok(call(a.app, 'GET', `${S}/files/${i.fileId}/status`))).toEqual({ fileId: i.fileId, objectId, state: 'durable', cached: true })
    expect(await ok(call(a.app, 'GET', `${S}/files/${b.fileId}/status`))).toEqual({ fileId: b.fileId, objectId, state: 'inflight', cached: true })
  })

  it('stats count files by state and bytes', async () => {
    const st = await ok(call(a.app, 'GET', `${S}/files/stats`))
    const all = (await ok(call(a.app, 'GET', `${S}/files`))).files
    expect(st.files).toBe(all.length)
    expect(st.inline).toBe(all.filter((f: any) => f.inline).length)
    expect(st.bytes).toBe(all.reduce((n: number, f: any) => n + f.size, 0))
    expect(st.durable + st.inflight + st.limited).toBe(st.files)
    expect(st.storedBytes).toBeGreaterThan(0)
  })
})

describe('cache: pin, offload, free, delete and sweep', () => {
  it('offload is 409 file.not_durable while the bytes here are the only copy, and a no-op on inline files', async () => {
    const b = await attached(randomBytes(BLOCK * 3))
    expectError(await call(a.app, 'POST', `${S}/files/${b.fileId}/offload`), 409, 'file.not_durable')
    expect((await ok(call(a.app, 'GET', `${S}/files/${b.fileId}`))).cached).toBe(true)
    const i = await attached(randomBytes(10))
    await ok(call(a.app, 'POST', `${S}/files/${i.fileId}/offload`), 204)
    expect((await ok(call(a.app, 'GET', `${S}/files/${i.fileId}`))).cached).toBe(true)
    expectError(await call(a.app, 'POST', `${S}/files/nope/offload`), 404, 'file.not_found')
  })

  it('pin marks the file pinned (a complete local copy stays cached)', async () => {
    const b = await attached(randomBytes(BLOCK * 3))
    await ok(call(a.app, 'POST', `${S}/files/${b.fileId}/pin`), 204)
    expect(await ok(call(a.app, 'GET', `${S}/files/${b.fileId}`))).toMatchObject({ pinned: true, cached: true })
    expectError(await call(a.app, 'POST', `${S}/files/nope/pin`), 404, 'file.not_found')
  })

  it('free never drops the only copy of a live file', async () => {
    const size = await cacheSize()
    const res = await ok(call(a.app, 'POST', '/v1/files/cache/free', { bytes: size }))
    expect(res.freed).toBe(0)
    expect(await cacheSize()).toBe(size)
    expectError(await call(a.app, 'POST', '/v1/files/cache/free', { bytes: -1 }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', '/v1/files/cache/free', {}), 400, 'request.missing_field')
  })

  it('delete tombstones the record (404 after); its bytes go at the next sweep, shared blocks stay', async () => {
    const shared = randomBytes(BLOCK * 2)
    const keep = await attached(shared)
    const gone = await attached(Buffer.concat([shared, randomBytes(BLOCK * 4)]))
    const before = await cacheSize()
    const del = await ok(call(a.app, 'DELETE', `${S}/files/${gone.fileId}`))
    expect(del.recordIds).toEqual([gone.fileId])
    expectError(await call(a.app, 'GET', `${S}/files/${gone.fileId}`), 404, 'file.not_found')
    expectError(await call(a.app, 'DELETE', `${S}/files/${gone.fileId}`), 404, 'file.not_found')
    expect(await cacheSize()).toBe(before)
    await ok(call(a.app, 'POST', '/v1/files/cache/sweep'), 204)
    expect(before - (await cacheSize())).toBe(4 * (BLOCK + 16))
    const got = await download(keep.fileId)
    expect(Buffer.compare(got.rawPayload, shared)).toBe(0)
  })

  it('free reclaims content no live record references (before any sweep)', async () => {
    const gone = await attached(randomBytes(BLOCK * 3))
    await ok(call(a.app, 'DELETE', `${S}/files/${gone.fileId}`))
    const res = await ok(call(a.app, 'POST', '/v1/files/cache/free', { bytes: 1 }))
    expect(res.freed).toBe(3 * (BLOCK + 16))
  })
})

describe('variants', () => {
  let png: string
  beforeAll(async () => {
    const img = await sharp({ create: { width: 600, height: 300, channels: 3, background: { r: 200, g: 10, b: 10 } } })
      .png()
      .toBuffer()
    png = (await attached(img, 'name=red.png&mime=image/png')).fileId
  })

  it('lists the widths and serves a resized image, cached like content', async () => {
    expect((await ok(call(a.app, 'GET', `${S}/files/${png}/variants`))).variants).toContain('w256')
    const before = await cacheSize()
    const res = await download(png, undefined, '?variant=w256')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('image/png')
    expect(await sharp(res.rawPayload).metadata()).toMatchObject({ width: 256, height: 128, format: 'png' })
    expect(await cacheSize()).toBe(before + res.rawPayload.length)
    const again = await download(png, 'bytes=0-9', '?variant=w256')
    expect(again.statusCode).toBe(206)
    expect(Buffer.compare(again.rawPayload, res.rawPayload.subarray(0, 10))).toBe(0)
  })

  it('400 file.variant_invalid for an unknown variant or a file that is no image', async () => {
    for (const v of ['w255', 'big', 'w', 'w99999']) expectError(await download(png, undefined, `?variant=${v}`), 400, 'file.variant_invalid')
    const txt = await attached(randomBytes(50), 'name=a.txt&mime=text/plain')
    expectError(await download(txt.fileId, undefined, '?variant=w64'), 400, 'file.variant_invalid')
    expect((await ok(call(a.app, 'GET', `${S}/files/${txt.fileId}/variants`))).variants).toEqual([])
  })
})

describe('streams', () => {
  it('{O}/files/query/subscribe: a snapshot of the object file records, then each new one', async () => {
    const base = await listen(a.app)
    const obj = await newObject(a.app, spaceId)
    const first = await ok(
      a.app.inject({ method: 'POST', url: `${S}/objects/${obj}/files?name=one`, payload: Buffer.from('1'), headers: { 'content-type': 'application/octet-stream' } }),
      201,
    )
    const sse = await openSse(`${base}${S}/objects/${obj}/files/query/subscribe`, { limit: 10 })
    try {
      await sse.until((f) => f.some((x) => x.event === 'snapshot'), 20_000)
      expect(sse.frames.find((x) => x.event === 'snapshot')!.data.records.map((r: any) => r.id)).toEqual([first.fileId])
      const second = await ok(
        a.app.inject({ method: 'POST', url: `${S}/objects/${obj}/files?name=two`, payload: Buffer.from('2'), headers: { 'content-type': 'application/octet-stream' } }),
        201,
      )
      await sse.until((f) => f.some((x) => x.event === 'changes' && x.data.some((c: any) => c.added.some((r: any) => r.id === second.fileId))), 20_000)
    } finally {
      sse.destroy()
    }
    expectError(await call(a.app, 'POST', `${S}/objects/nope/files/query/subscribe`, { limit: 1 }), 404, 'object.not_found')
  })

  it('{S}/files/subscribe: a status frame when a file appears', async () => {
    const base = await listen(a.app).catch(() => `http://127.0.0.1:${(a.app.server.address() as any).port}`)
    const sse = await openSse(`${base}${S}/files/subscribe`)
    try {
      await sse.until((f) => f.some((x) => x.event === 'ready'), 20_000)
      const res = await attached(randomBytes(20))
      const frames = await sse.until((f) => f.some((x) => x.event === 'status' && x.data.fileId === res.fileId), 20_000)
      expect(frames.find((x) => x.event === 'status' && x.data.fileId === res.fileId)!.data).toEqual({ fileId: res.fileId, objectId, state: 'durable', cached: true })
    } finally {
      sse.destroy()
    }
  })
})

describe('files.gcInterval', () => {
  it('a configured interval sweeps in the background: a deleted file bytes go without a sweep call', async () => {
    const b = await bootApp({ modules: SERVER_MODULES.map((m) => (m.name === 'files' ? makeFilesServerModule({ blockSize: BLOCK, graceMs: 0, gcIntervalMs: 100 }) : m)) })
    try {
      const sp = await newSpace(b.app, 'Swept')
      const obj = await newObject(b.app, sp)
      const res = await ok(
        b.app.inject({
          method: 'POST',
          url: `/v1/spaces/${sp}/objects/${obj}/files?name=x`,
          payload: randomBytes(BLOCK * 4),
          headers: { 'content-type': 'application/octet-stream' },
        }),
        201,
      )
      const size = async () => (await ok<{ size: number }>(call(b.app, 'GET', '/v1/files/cache'))).size
      expect(await size()).toBe(4 * (BLOCK + 16))
      await ok(call(b.app, 'DELETE', `/v1/spaces/${sp}/files/${res.fileId}`))
      const end = Date.now() + 20_000
      while ((await size()) > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50))
      expect(await size()).toBe(0)
    } finally {
      await b.close()
    }
  }, 60_000)
})
