import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { accountKeyFromMnemonic, type KeyPair } from '../../sync/crypto/keys.ts'
import { REPO } from '../server/process.ts'
import { api, ok, startDaemon, stopDaemon, until, type Daemon } from '../e2e/daemons.ts'
import { browserFixture } from './harness.ts'
import { daemonDigest, wsAddress } from './daemon.ts'

const OBJECTS = 1000
const SCREENSHOT = join(REPO, 'test-results', 'browser-sync.png')

let fx: Awaited<ReturnType<typeof browserFixture>>
let d: Daemon
let dir: string
let mnemonic: string
let accountId: string
let accountKey: KeyPair
let spaceId: string
const objects: string[] = []
let page: Page
let errors: string[] = []
let deviceId: string

const S = () => `/v1/spaces/${spaceId}`
const app = <T>(fn: string, ...args: unknown[]): Promise<T> => page.evaluate(([fn, args]) => (window as any).app[fn](...args), [fn, args] as const) as Promise<T>
const why = () => `page errors:\n${errors.join('\n')}\ndaemon stderr:\n${d.stderr().slice(-4000)}`

beforeAll(async () => {
  fx = await browserFixture()
  dir = mkdtempSync(join(tmpdir(), 'svc-browser-'))
  d = await startDaemon(dir, { mdns: false })
  ;({ accountId, mnemonic } = await ok(d, 'POST', '/v1/auth', {}))
  accountKey = accountKeyFromMnemonic(mnemonic)
  spaceId = (await ok(d, 'POST', '/v1/spaces', { name: 'Browser' })).id
  for (let i = 0; i < OBJECTS; i++) objects.push((await ok(d, 'POST', `${S()}/objects`, { initialProperties: { core: { name: `obj ${i}` } } })).objectId)
}, 600_000)

afterAll(async () => {
  if (page) await app('close').catch(() => undefined)
  await fx?.close()
  if (d) await stopDaemon(d, 'SIGKILL')
  if (dir) rmSync(dir, { recursive: true, force: true })
})

// The tests run in order, each on the state the one before left (one page, one daemon).
describe('a page syncs with a real daemon over libp2p WebSockets (real Chromium)', () => {
  it("restores the account from its mnemonic, syncs the 1,000-object space and shows the daemon's state digest", async () => {
    ;({ page, errors } = await fx.page('index.html'))
    const opened = await app<{ accountId: string; deviceId: string; crypto: string }>('restore', mnemonic)
    expect(opened.accountId).toBe(accountId)
    deviceId = opened.deviceId
    // Chromium has Ed25519 in WebCrypto: the page verifies with it, not with noble, in workers.
    expect(opened.crypto).toBe('browser-webcrypto+workers')
    await app('connect', await wsAddress(d))

    const total = (await ok(d, 'POST', `${S()}/objects/query`, { limit: 0, includeTotal: true })).total
    expect(total).toBeGreaterThanOrEqual(OBJECTS)
    await until('the space and every object in the page', async () => (await app<number>('objectCount', spaceId)) >= total, 240_000, 500).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n${why()}`)
    })
    let last = { page: '', daemon: '' }
    await until(
      'the same state digest in the page and in the daemon',
      async () => {
        last = { page: (await app<string>('digest', spaceId)) ?? '', daemon: await daemonDigest(d, accountId, accountKey, spaceId) }
        return last.page !== '' && last.page === last.daemon
      },
      120_000,
      1_000,
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}: ${JSON.stringify(last)}\n${why()}`)
    })
    expect(last.page).toMatch(/^[0-9a-f]{64}$/)
    // The signatures of the changes head sync brought were verified off the page's thread.
    const by = await app<{ workers: number; page: number }>('verifiedBy')
    expect(by.workers, JSON.stringify(by)).toBeGreaterThan(total)
    mkdirSync(join(REPO, 'test-results'), { recursive: true })
    await page.screenshot({ path: SCREENSHOT, fullPage: true })
  })

  it('is a device of the account: the daemon lists it in GET /v1/devices', async () => {
    await until("the page in the daemon's device list", async () => (await ok(d, 'GET', '/v1/devices')).devices.some((x: any) => x.id === deviceId), 60_000, 500)
  })

  it('writes offline, keeps them across a reload (IndexedDB), and the daemon receives them once it reconnects', async () => {
    await app('offline')
    const target = objects[7]
    const ids = Array.from({ length: 20 }, (_, i) => `off${String(i).padStart(2, '0')}`)
    for (const id of ids) await app('write', spaceId, target, 'offline', id, `written offline ${id}`)
    expect((await api(d, 'POST', `${S()}/query`, { objectId: target, dataset: 'offline', limit: 100 })).json.records ?? []).toEqual([])

    await page.reload()
    const reopened = await app<{ deviceId: string }>('restore', mnemonic)
    // Same device (its key is kept in IndexedDB), same data, before any connection.
    expect(reopened.deviceId).toBe(deviceId)
    expect(await app<number>('objectCount', spaceId)).toBeGreaterThanOrEqual(OBJECTS)
    const kept = await app<Array<{ id: string; v: string }>>('records', spaceId, target, 'offline')
    expect(kept.map((r) => r.id)).toEqual(ids)

    await app('connect', await wsAddress(d))
    await until(
      'the daemon holds the offline writes',
      async () => {
        const r = await ok(d, 'POST', `${S()}/query`, { objectId: target, dataset: 'offline', sort: ['id'], limit: 100 })
        return r.records.length === ids.length && r.records.every((x: any, i: number) => x.id === ids[i] && x.v === `written offline ${ids[i]}`)
      },
      120_000,
      500,
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n${why()}`)
    })
  })

  it("a live query in the page receives a write made through the daemon's HTTP API", async () => {
    const target = objects[3]
    expect(await app<number>('watch', spaceId, target, 'live')).toBe(0)
    await ok(d, 'POST', `${S()}/modify`, { objectId: target, dataset: 'live', records: [{ id: 'r1', ops: [{ type: '$set', path: 'v', value: 'from the daemon' }] }] })
    const frame = await until(
      'the write in a live frame',
      async () => (await page.evaluate(() => (window as any).app.frames)).find((f: any) => f.added.some((e: any) => e.id === 'r1')),
      60_000,
      200,
    )
    expect(frame.added.find((e: any) => e.id === 'r1').doc.v).toBe('from the daemon')
  })
})
