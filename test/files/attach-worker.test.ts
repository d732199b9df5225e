import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { WorkerBlockCrypto } from '../../node/files/worker-block-crypto.ts'
import type { SharedSlots } from '../../node/files/shared-slots.ts'
import { SERVER_MODULES } from '../../server/modules/index.ts'
import { makeFilesServerModule } from '../../server/modules/files.ts'
import { bootApp, newObject, newSpace, type Booted } from '../routes/helpers.ts'

/*
 * Attach with the daemon's block crypto thread: blocks cross to the thread and back through
 * shared slots, which attach must give back whether it stores the file or fails half way, and
 * without which (all lent) it still works, posting copies.
 */
const BLOCK = 4096
const blockCrypto = new WorkerBlockCrypto()
const modules = SERVER_MODULES.map((m) => (m.name === 'files' ? makeFilesServerModule({ blockSize: BLOCK, attachMax: 1024 * 1024, blockCrypto }) : m))
const slots = () => (blockCrypto as unknown as { slots: SharedSlots }).slots

let a: Booted
let S: string
let objectId: string
beforeAll(async () => {
  a = await bootApp({ modules })
  // The thread (and its slots) start at the first block; start them here so each test reads the pool.
  await blockCrypto.isBlock('x', new Uint8Array(1))
  const spaceId = await newSpace(a.app, 'Files on a thread')
  objectId = await newObject(a.app, spaceId)
  S = `/v1/spaces/${spaceId}`
}, 60_000)
afterAll(async () => {
  await a?.close()
  await blockCrypto.close()
})

/** The body in pieces of 16 KiB, as a socket delivers it: blocks are sealed while more arrives. */
const inPieces = (bytes: Uint8Array) =>
  Readable.from(
    (function* () {
      for (let o = 0; o < bytes.length; o += 16 * 1024) yield Buffer.from(bytes.subarray(o, o + 16 * 1024))
    })(),
  )
const attach = (bytes: Uint8Array) =>
  a.app.inject({ method: 'POST', url: `${S}/objects/${objectId}/files?name=f.bin`, payload: inPieces(bytes), headers: { 'content-type': 'application/octet-stream' } })
const download = async (fileId: string) => (await a.app.inject({ method: 'GET', url: `${S}/files/${fileId}/content` })).rawPayload

describe('attach through the block crypto thread', () => {
  it('stores a file of many blocks that reads back byte for byte, and gives every slot back', async () => {
    const bytes = randomBytes(BLOCK * 60 + 77)
    const res = await attach(bytes)
    expect(res.statusCode).toBe(201)
    const all = slots().available
    expect(all).toBeGreaterThan(16)
    expect(Buffer.compare(await download(res.json().fileId), bytes)).toBe(0)
    expect(slots().available).toBe(all)
  })

  it('a body past the limit is refused (413) and, once the route has unwound, leaves no slot lent', async () => {
    const all = slots().available
    // The answer goes out as soon as the limit is passed, before the rest of the body is read
    // (inject then reports the body it was still sending as aborted).
    const res = await attach(randomBytes(1024 * 1024 + 64 * 1024)).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))
    if (!(res instanceof Error)) expect(res.statusCode).toBe(413)
    else expect(res.name).toBe('AbortError')
    await vi.waitFor(() => expect(slots().available).toBe(all), { timeout: 5_000, interval: 20 })
  })

  it('with every slot lent elsewhere, blocks go as copies and the file is the same', async () => {
    const taken: number[] = []
    for (let s = slots().take(); s !== undefined; s = slots().take()) taken.push(s)
    try {
      const bytes = randomBytes(BLOCK * 30 + 5)
      const res = await attach(bytes)
      expect(res.statusCode).toBe(201)
      expect(Buffer.compare(await download(res.json().fileId), bytes)).toBe(0)
      expect(slots().available).toBe(0)
    } finally {
      for (const s of taken) slots().give(s)
    }
  })
})
