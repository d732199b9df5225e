/**
 * Issue 36, files through the hub, with real processes and real Chromium: a page that reaches
 * no daemon, only a hub, reads a file a daemon of another member attached while the page was
 * closed, fetching its sealed blocks from the hub block by block, checking each against its
 * address, opening it in the page, and keeping it in the page's IndexedDB database.
 *
 * Owner A (a daemon) shares a space with member B; B's daemon accepts it, registers its spaces
 * with the hub and stops for good. A attaches a 4-block file, waits until the hub holds every
 * block (the file turns durable on A), drops its own copy and stops: from then on the hub is
 * the only holder of the blocks. A page restores B from its phrase, adds the hub and reads the
 * file; after a reload, with no peer at all, it reads it again from its own storage.
 */
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { Fleet, S, type Account } from '../e2e/accounts.ts'
import { api, ok, stopDaemon, until } from '../e2e/daemons.ts'
import { HubFleet, type HubProc } from '../e2e/hub-process.ts'
import { browserFixture } from './harness.ts'

/** Four blocks of files' 1 MiB, the last one 5 bytes long. */
const FILE_BYTES = 3 * 1024 * 1024 + 5

const fleet = new Fleet()
const hubs = new HubFleet()
let fx: Awaited<ReturnType<typeof browserFixture>>
let alice: Account
let bob: Account
let hub: HubProc
let spaceId: string
let fileId: string
let original: Uint8Array<ArrayBuffer>
let page: Page
let errors: string[] = []

interface ReadResult {
  sha256: string
  size: number
  type: string
  progress: Array<{ loaded: number; total: number }>
  ms: number
}

const app = <T>(fn: string, ...args: unknown[]): Promise<T> => page.evaluate(([fn, args]) => (window as any).app[fn](...args), [fn, args] as const) as Promise<T>
const explain = (e: unknown) => {
  throw new Error(`${(e as Error).message}\npage errors:\n${errors.join('\n')}\nhub stderr:\n${hub.proc.stderr().slice(-4000)}`)
}
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

beforeAll(async () => {
  fx = await browserFixture()
  ;[alice, bob] = await Promise.all(['alice', 'bob'].map((n) => fleet.account(n, { mdns: false })))
  hub = await hubs.start(['--allow', `${alice.identity},${bob.identity}`], { listen: '/ip4/127.0.0.1/tcp/0,/ip4/127.0.0.1/tcp/0/ws' })
  for (const a of [alice, bob]) expect((await api(a.d, 'POST', '/v1/hubs', { multiaddr: hub.addr })).status).toBe(201)
  await until('both admitted', async () => {
    const [a, b] = await Promise.all([ok(alice.d, 'GET', '/v1/hubs'), ok(bob.d, 'GET', '/v1/hubs')])
    return a.hubs[0].admission === 'ok' && b.hubs[0].admission === 'ok'
  })
  spaceId = (await ok(alice.d, 'POST', '/v1/spaces', { name: 'Files' })).id
  await ok(alice.d, 'POST', `${S(spaceId)}/acl/add`, { identities: [bob.identity], permission: 'reader' })
  await until('B is offered the space', async () => (await api(bob.d, 'GET', S(spaceId))).json?.status === 'invite_pending', 60_000, 200)
  await ok(bob.d, 'POST', `${S(spaceId)}/invite/accept`)
  await until('B holds the space', async () => (await api(bob.d, 'GET', S(spaceId))).json?.status === 'active', 60_000, 200)
  await until('B synced all its spaces with the hub', async () => {
    const st = (await ok(bob.d, 'GET', '/v1/sync-status')).spaces as Array<{ spaceId: string; pending: number; hubs?: Array<{ state: string; lastSyncAt: unknown }> }>
    return st.some((s) => s.spaceId === spaceId) && st.every((s) => s.pending === 0 && s.hubs?.[0]?.state === 'kept' && s.hubs[0].lastSyncAt !== null)
  })
  await stopDaemon(bob.d)

  // B exists only as the page from here on; A attaches the file.
  const { objectId } = await ok(alice.d, 'POST', `${S(spaceId)}/objects`, { initialProperties: { core: { name: 'report' } } })
  original = new Uint8Array(randomBytes(FILE_BYTES))
  const res = await fetch(`${alice.d.url}${S(spaceId)}/objects/${objectId}/files?name=report.bin`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: original,
  })
  expect(res.status).toBe(201)
  fileId = (await res.json()).fileId as string
  await until('the file is durable on A (the hub holds its blocks)', async () => (await ok(alice.d, 'GET', `${S(spaceId)}/files/${fileId}`)).state === 'durable', 120_000, 500)
  // A's copy goes and A stops: the hub is the one holder of the blocks.
  await ok(alice.d, 'POST', `${S(spaceId)}/files/${fileId}/offload`)
  expect(await ok(alice.d, 'GET', `${S(spaceId)}/files/${fileId}`)).toMatchObject({ cached: false, cachedBlocks: 0, blocks: 4 })
  await until('A synced the space with the hub after the attach', async () => {
    const st = await ok(alice.d, 'GET', `${S(spaceId)}/sync-status`)
    return st.pending === 0 && st.hubs?.[0]?.state === 'kept' && st.hubs[0].lastSyncAt !== null
  })
  await stopDaemon(alice.d)
}, 300_000)

afterAll(async () => {
  if (page) await app('close').catch(() => undefined)
  await fx?.close()
  hubs.close()
  await fleet.close()
})

describe("a page reads a member's file through the hub (real Chromium, real hub and daemons)", () => {
  it('restores B from its phrase, syncs through the hub alone, and reads the file block by block with its bytes equal to the original', async () => {
    ;({ page, errors } = await fx.page('index.html'))
    expect((await app<{ accountId: string }>('restore', bob.mnemonic)).accountId).toBe(bob.identity)
    const t0 = Date.now()
    await app('addHub', hub.ws).catch(explain)
    const listed = await until(
      'the file record in the page',
      async () => {
        if (!(await app<Array<{ id: string }>>('spaces')).some((s) => s.id === spaceId)) return undefined
        const files = await app<Array<{ id: string; size: number; cached: boolean; cachedBlocks: number; blocks: number }>>('files', spaceId)
        return files.find((f) => f.id === fileId)
      },
      120_000,
      250,
    ).catch(explain)
    const tRecord = Date.now() - t0
    // Nothing of the file is in the page yet.
    expect(listed).toMatchObject({ size: FILE_BYTES, blocks: 4, cachedBlocks: 0, cached: false })

    const got = await app<ReadResult>('readFile', spaceId, fileId).catch(explain)
    expect(got.size).toBe(FILE_BYTES)
    expect(got.sha256).toBe(sha(original))
    expect(got.type).toBe('application/octet-stream')
    // Progress after each block (a report before the first), up to the whole file.
    expect(got.progress.map((p) => p.loaded)).toEqual([0, 1 << 20, 2 << 20, 3 << 20, FILE_BYTES])
    expect(got.progress.every((p) => p.total === FILE_BYTES)).toBe(true)
    const stats = await app<{ fetched: number; drops: Record<string, number> }>('fileExchange')
    expect(stats.fetched).toBe(4)
    expect(stats.drops).toEqual({})
    // The hub is the only peer the page had: the blocks came from it.
    expect(await app<string[]>('peers')).toEqual([hub.peerId])
    expect((await app<Array<{ id: string; cached: boolean; cachedBlocks: number }>>('files', spaceId)).find((f) => f.id === fileId)).toMatchObject({
      cached: true,
      cachedBlocks: 4,
    })
    console.log(`page via hub: file record after ${tRecord} ms; ${FILE_BYTES} bytes (4 blocks) fetched, checked and opened in ${Math.round(got.ms)} ms`)
  })

  it('after a reload, with no peer at all, reads the file again from its own storage', async () => {
    await app('close')
    await page.reload()
    await app('restore', bob.mnemonic)
    await app('startSync')
    expect(await app<string[]>('peers')).toEqual([])
    const got = await app<ReadResult>('readFile', spaceId, fileId).catch(explain)
    expect(got.sha256).toBe(sha(original))
    expect((await app<{ fetched: number }>('fileExchange')).fetched).toBe(0)
    console.log(`page offline: the file read back from IndexedDB in ${Math.round(got.ms)} ms`)
  })
})
