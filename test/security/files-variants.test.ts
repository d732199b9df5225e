import { readdirSync, readFileSync } from 'node:fs'
import { crc32, deflateSync } from 'node:zlib'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { filesModule } from '../../sync/modules/files/module.ts'
import type { FilesService } from '../../sync/modules/files/service.ts'
import { runVariantProcess } from '../../node/files/variant-process.ts'
import { bootApp, expectError, newObject, newSpace, ok, type Booted } from '../routes/helpers.ts'

/*
 * Issue 33, 7: image variants could be bombed. A 403 KB PNG that decodes to 10000 x 10000
 * pixels, asked for in six widths at once, took the daemon from 272 to 726 MB at 15-19 s of
 * CPU each. Now the header is checked before anything is decoded, at most two variants are
 * generated at once, and requests for a variant being generated share its one job.
 * docs/files.md "Variants"; the RSS figure is the bench's `variantBomb`.
 */
let a: Booted
let S: string
let objectId: string
let files: FilesService

beforeAll(async () => {
  a = await bootApp()
  const spaceId = await newSpace(a.app, 'Variants')
  objectId = await newObject(a.app, spaceId)
  S = `/v1/spaces/${spaceId}`
  files = a.engine.account().services.of(filesModule)
}, 60_000)
afterAll(async () => {
  await a?.close()
})

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'latin1')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}

/** A black 1-bit PNG, not interlaced: a few KB of file for `width * height` pixels. */
function bitmapPng(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 1 // bit depth
  ihdr[9] = 0 // greyscale
  const raw = Buffer.alloc((1 + Math.ceil(width / 8)) * height) // filter byte 0 and zero bits on every row
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/**
 * Variants being generated in this process at this moment: sharp's tasks here plus variant
 * processes among our children, whichever way the daemon does the work.
 */
function variantWorkNow(): number {
  let children = 0
  for (const task of readdirSync('/proc/self/task')) {
    let pids: string[]
    try {
      pids = readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean)
    } catch {
      continue
    }
    for (const pid of pids) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('variant-child')) children++
      } catch {
        /* ended meanwhile */
      }
    }
  }
  return sharp.counters().process + children
}

const attach = async (bytes: Uint8Array, name: string, mime: string) =>
  (
    await ok<{ fileId: string }>(
      a.app.inject({
        method: 'POST',
        url: `${S}/objects/${objectId}/files?name=${name}&mime=${encodeURIComponent(mime)}`,
        payload: Buffer.from(bytes),
        headers: { 'content-type': 'application/octet-stream' },
      }),
      201,
    )
  ).fileId
const variant = (fileId: string, v: string) => a.app.inject({ method: 'GET', url: `${S}/files/${fileId}/content?variant=${v}` })
const WIDTHS = ['w64', 'w128', 'w256', 'w512', 'w1024', 'w2048']

describe('variant work is bounded', () => {
  it('refuses the 10000 x 10000 PNG bomb from its header: 400 file.variant_invalid for all six widths', async () => {
    const bomb = bitmapPng(10_000, 10_000)
    expect(bomb.length).toBeLessThan(64 * 1024)
    const id = await attach(bomb, 'bomb.png', 'image/png')
    const answers = await Promise.all(WIDTHS.map((w) => variant(id, w)))
    for (const res of answers) expectError(res, 400, 'file.variant_invalid')
    expect(answers[0].json().error.message).toBe('the image is too large to resize here')
  })

  it('refuses an interlaced image whose whole decoded size is over budget, and serves a smaller one', async () => {
    const big = await sharp({ create: { width: 4200, height: 4200, channels: 3, background: { r: 1, g: 2, b: 3 } } })
      .png({ progressive: true })
      .toBuffer()
    expectError(await variant(await attach(big, 'interlaced.png', 'image/png'), 'w64'), 400, 'file.variant_invalid')
    const small = await sharp({ create: { width: 1000, height: 1000, channels: 3, background: { r: 1, g: 2, b: 3 } } })
      .png({ progressive: true })
      .toBuffer()
    const res = await variant(await attach(small, 'small.png', 'image/png'), 'w64')
    expect(res.statusCode).toBe(200)
    expect(await sharp(res.rawPayload).metadata()).toMatchObject({ width: 64, format: 'png' })
  })

  it('generates at most two variants at once; the others wait their turn and are all served', async () => {
    // 49 MP, just under the pixel cap: each width takes libvips a while to shrink.
    const id = await attach(bitmapPng(7000, 7000), 'large.png', 'image/png')
    let most = 0
    const poll = setInterval(() => (most = Math.max(most, variantWorkNow())), 2)
    try {
      const answers = await Promise.all(WIDTHS.map((w) => variant(id, w)))
      expect(answers.map((r) => r.statusCode)).toEqual(WIDTHS.map(() => 200))
    } finally {
      clearInterval(poll)
    }
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThanOrEqual(2)
  })

  it('concurrent requests for one variant share one job: it is generated and stored once', async () => {
    const png = await sharp({ create: { width: 3000, height: 2000, channels: 3, background: { r: 200, g: 10, b: 10 } } })
      .png()
      .toBuffer()
    const id = await attach(png, 'shared.png', 'image/png')
    const stored: string[] = []
    const put = files.store.put.bind(files.store)
    files.store.put = async (spaceId, blocks) => {
      for (const b of blocks) if (b.id.startsWith('variant.')) stored.push(b.id)
      return put(spaceId, blocks)
    }
    try {
      const answers = await Promise.all(Array.from({ length: 5 }, () => variant(id, 'w256')))
      expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200])
      for (const r of answers) expect(Buffer.compare(r.rawPayload, answers[0].rawPayload)).toBe(0)
      expect((await variant(id, 'w256')).statusCode).toBe(200)
    } finally {
      files.store.put = put
    }
    expect(stored).toEqual([`variant.${id}.w256`])
  })

  it('bytes that are not the format the record claims get no variant (an SVG or a JPEG labelled PNG)', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400"><rect width="400" height="400" fill="red"/></svg>')
    expectError(await variant(await attach(svg, 'fake.png', 'image/png'), 'w64'), 400, 'file.variant_invalid')
    const jpeg = await sharp({ create: { width: 300, height: 300, channels: 3, background: { r: 9, g: 9, b: 9 } } })
      .jpeg()
      .toBuffer()
    expectError(await variant(await attach(jpeg, 'jpeg.png', 'image/png'), 'w64'), 400, 'file.variant_invalid')
  })
})

describe('the variant process is bounded from outside', () => {
  const job = async (over: Partial<Parameters<typeof runVariantProcess>[0]>) => {
    const png = bitmapPng(7000, 7000)
    return runVariantProcess({
      source: (async function* () {
        yield png
      })(),
      size: png.length,
      width: 2048,
      format: 'png',
      pixelsMax: 50_000_000,
      decodeMax: 48 << 20,
      timeoutMs: 20_000,
      rssMax: 384 << 20,
      outputMax: 64 << 20,
      ...over,
    })
  }

  it('is killed when it takes too long', async () => {
    expect(await job({ timeoutMs: 30 })).toEqual({ kind: 'failed', reason: 'no result within 30 ms' })
  })

  it.runIf(process.platform === 'linux')('is killed when it holds too much memory', async () => {
    expect(await job({ rssMax: 20 << 20 })).toEqual({ kind: 'failed', reason: 'over 20 MiB of memory' })
  })

  it('is killed when its output passes the cap', async () => {
    expect(await job({ outputMax: 100 })).toEqual({ kind: 'failed', reason: 'output too large' })
  })

  it('answers with the resized image otherwise', async () => {
    const res = await job({})
    expect(res.kind).toBe('ok')
    expect(await sharp((res as { bytes: Uint8Array }).bytes).metadata()).toMatchObject({ width: 2048, height: 2048, format: 'png' })
  })
})
