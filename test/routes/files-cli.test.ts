import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { memoryIO } from '../server/process.ts'
import { bootApp, listen, newObject, newSpace, type Booted } from './helpers.ts'

/** `svc files attach|get|ls|info|status|pin|offload|rm|cache` against a real app. */
let b: Booted
let url: string
let dir: string
beforeAll(async () => {
  b = await bootApp()
  url = await listen(b.app)
  dir = mkdtempSync(join(tmpdir(), 'svc-files-cli-'))
}, 30_000)
afterAll(async () => {
  await b.close()
  rmSync(dir, { recursive: true, force: true })
})

async function svc(...args: string[]) {
  const m = memoryIO('', { SVC_URL: url })
  const code = await main(args, m.io)
  return { code, out: m.out(), err: m.err() }
}

describe('svc files', () => {
  it('attach streams a file, get writes it back (whole and a range), ls/info/status/pin/offload/rm/cache answer like the routes', async () => {
    const space = await newSpace(b.app, 'cli files')
    const obj = await newObject(b.app, space)
    const bytes = randomBytes(3 * 1024 * 1024 + 17)
    const src = join(dir, 'photo.bin')
    writeFileSync(src, bytes)
    const att = await svc('files', 'attach', space, obj, src)
    expect(att.code, att.err).toBe(0)
    const { fileId, uri } = JSON.parse(att.out)
    expect(uri).toBe(`svc://f/${space}/${fileId}`)

    const out = join(dir, 'back.bin')
    expect((await svc('files', 'get', space, fileId, '--out', out)).code).toBe(0)
    expect(Buffer.compare(readFileSync(out), bytes)).toBe(0)
    expect((await svc('files', 'get', space, fileId, '--out', out, '--range', '100-199')).code).toBe(0)
    expect(Buffer.compare(readFileSync(out), bytes.subarray(100, 200))).toBe(0)

    const lsTable = (await svc('files', 'ls', space)).out
    expect(lsTable).toMatch(/^ID\s+NAME\s+SIZE\s+MIME\s+STATE\s+CACHED\s+PINNED\s+OBJECT$/m)
    const ls = JSON.parse((await svc('files', 'ls', space, '--json')).out)
    expect(ls.files.map((f: any) => f.name)).toEqual(['photo.bin'])
    expect(JSON.parse((await svc('files', 'info', space, fileId)).out)).toMatchObject({ id: fileId, size: bytes.length, blocks: 4 })
    expect(JSON.parse((await svc('files', 'status', space, fileId)).out)).toEqual({ fileId, objectId: obj, state: 'inflight', cached: true })
    expect(await svc('files', 'pin', space, fileId)).toMatchObject({ code: 0, out: `pinned ${fileId}\n` })
    const off = await svc('files', 'offload', space, fileId)
    expect(off.code).toBe(1)
    expect(off.err).toContain('409 file.not_durable')
    expect(JSON.parse((await svc('files', 'cache')).out).size).toBeGreaterThan(bytes.length)
    expect((await svc('files', 'rm', space, fileId)).code).toBe(0)
    expect(JSON.parse((await svc('files', 'cache', 'free', '1')).out).freed).toBeGreaterThan(bytes.length)
    expect(await svc('files', 'cache', 'sweep')).toMatchObject({ code: 0, out: 'swept the files cache\n' })
    expect((await svc('files', 'get', space, fileId, '--out', out)).err).toContain('404 file.not_found')
  })

  it('usage errors exit 1', async () => {
    for (const args of [
      ['files'],
      ['files', 'frob'],
      ['files', 'attach', 'a'],
      ['files', 'get', 's', 'f', '--range', 'x'],
      ['files', 'cache', 'free'],
      ['files', 'cache', 'size', 'x'],
    ]) {
      expect((await svc(...args)).code, args.join(' ')).toBe(1)
    }
  })
})
