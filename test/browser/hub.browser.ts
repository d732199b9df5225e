/**
 * Issue 36, the browser part, with real processes and real Chromium: a page that reaches no
 * daemon, only a hub (`svc hub`, WebSockets on loopback), restores account B from its phrase and
 * syncs B's spaces through the hub, as B's daemon would.
 *
 * Owner A (a daemon) shares a space with member B. B's daemon accepts it, hands the hub its
 * spaces (admitted by a token) and stops for good: from then on B exists only as the page. A
 * writes while the page is closed; the page, opened later, reads it from the hub. The page
 * writes offline and across a reload; once it reconnects to the hub, A's daemon (which never
 * learns the page's address: a page cannot listen) receives the writes through the hub.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { Fleet, S, type Account } from '../e2e/accounts.ts'
import { api, ok, stopDaemon, until } from '../e2e/daemons.ts'
import { HubFleet, type HubProc } from '../e2e/hub-process.ts'
import { browserFixture } from './harness.ts'
import { daemonDigest } from './daemon.ts'

const OBJECTS = 200

const fleet = new Fleet()
const hubs = new HubFleet()
let fx: Awaited<ReturnType<typeof browserFixture>>
let alice: Account
let bob: Account
let hub: HubProc
let spaceId: string
let target: string
let page: Page
let errors: string[] = []

const app = <T>(fn: string, ...args: unknown[]): Promise<T> => page.evaluate(([fn, args]) => (window as any).app[fn](...args), [fn, args] as const) as Promise<T>
const why = () => `page errors:\n${errors.join('\n')}\nhub stderr:\n${hub.proc.stderr().slice(-4000)}\nA's daemon stderr:\n${alice.d.stderr().slice(-3000)}`
const explain = (e: unknown) => {
  throw new Error(`${(e as Error).message}\n${why()}`)
}
const objectsAt = async (a: Account) => (await ok(a.d, 'POST', `${S(spaceId)}/objects/query`, { limit: 0, includeTotal: true })).total as number
const ms = (t0: number) => Date.now() - t0

/** A's daemon synced the space with the hub after its last write. */
const aliceSynced = () =>
  until('A synced the space with the hub', async () => {
    const st = await ok(alice.d, 'GET', `${S(spaceId)}/sync-status`)
    return st.pending === 0 && st.hubs?.[0]?.state === 'kept' && st.hubs[0].lastSyncAt !== null
  })

beforeAll(async () => {
  fx = await browserFixture()
  ;[alice, bob] = await Promise.all(['alice', 'bob'].map((n) => fleet.account(n, { mdns: false })))
  // TCP for the daemons, WebSockets on loopback for the page; A by the allowlist, B by a token.
  hub = await hubs.start(['--allow', alice.identity], { listen: '/ip4/127.0.0.1/tcp/0,/ip4/127.0.0.1/tcp/0/ws' })
  const token = await hubs.admit(hub, bob.identity)
  expect((await api(alice.d, 'POST', '/v1/hubs', { multiaddr: hub.addr })).status).toBe(201)
  expect((await api(bob.d, 'POST', '/v1/hubs', { multiaddr: hub.addr, token })).status).toBe(201)
  await until('both admitted', async () => {
    const [a, b] = await Promise.all([ok(alice.d, 'GET', '/v1/hubs'), ok(bob.d, 'GET', '/v1/hubs')])
    return a.hubs[0].admission === 'ok' && b.hubs[0].admission === 'ok'
  })

  // A shares a space with B (a direct add); B's daemon accepts it through the hub.
  spaceId = (await ok(alice.d, 'POST', '/v1/spaces', { name: 'Team' })).id
  target = (await ok(alice.d, 'POST', `${S(spaceId)}/objects`, { initialProperties: { core: { name: 'notes' } } })).objectId
  await ok(alice.d, 'POST', `${S(spaceId)}/acl/add`, { identities: [bob.identity], permission: 'writer' })
  await until('B is offered the space', async () => (await api(bob.d, 'GET', S(spaceId))).json?.status === 'invite_pending', 60_000, 200)
  await ok(bob.d, 'POST', `${S(spaceId)}/invite/accept`)
  await until('B holds the space', async () => (await api(bob.d, 'GET', S(spaceId))).json?.status === 'active', 60_000, 200)
  // Every space of B (its account's own space, which lists the others, included) is kept and synced.
  await until('B synced all its spaces with the hub', async () => {
    const st = (await ok(bob.d, 'GET', '/v1/sync-status')).spaces as Array<{ spaceId: string; pending: number; hubs?: Array<{ state: string; lastSyncAt: unknown }> }>
    return st.some((s) => s.spaceId === spaceId) && st.every((s) => s.pending === 0 && s.hubs?.[0]?.state === 'kept' && s.hubs[0].lastSyncAt !== null)
  })
  await stopDaemon(bob.d)
}, 300_000)

afterAll(async () => {
  if (page) await app('close').catch(() => undefined)
  await fx?.close()
  hubs.close()
  await fleet.close()
})

// In order, each on the state the one before left: one hub, A's daemon, one page for B.
describe('a page uses a hub as a daemon does (real Chromium, real hub and daemons)', () => {
  it('with no daemon of its own, restores B from its phrase and reads, through the hub, what A wrote while it was closed', async () => {
    // The page was never open: A writes now.
    const before = await objectsAt(alice)
    const tA = Date.now()
    for (let i = 0; i < OBJECTS; i += 20)
      await Promise.all(Array.from({ length: 20 }, (_, j) => ok(alice.d, 'POST', `${S(spaceId)}/objects`, { initialProperties: { core: { name: `obj ${i + j}` } } })))
    await ok(alice.d, 'POST', `${S(spaceId)}/modify`, { objectId: target, dataset: 'notes', records: [{ id: 'a1', ops: [{ type: '$set', path: 'v', value: 'from A' }] }] })
    const total = await objectsAt(alice)
    expect(total).toBe(before + OBJECTS)
    await aliceSynced()
    console.log(`A wrote ${OBJECTS} objects and synced them with the hub in ${ms(tA)} ms`)

    ;({ page, errors } = await fx.page('index.html'))
    const opened = await app<{ accountId: string }>('restore', bob.mnemonic)
    expect(opened.accountId).toBe(bob.identity)
    const t0 = Date.now()
    // No token: B was admitted by its daemon, and the hub admits the page as a device of B.
    const added = await app<any>('addHub', hub.ws).catch(explain)
    expect(added).toMatchObject({ peerId: hub.peerId, identity: hub.identity, admission: 'ok', connected: true })
    await until('the shared space and all its objects in the page', async () => (await app<number>('objectCount', spaceId)) >= total, 180_000, 250).catch(explain)
    const tObjects = ms(t0)
    expect(await app<Array<{ id: string; v: string }>>('records', spaceId, target, 'notes')).toEqual([{ id: 'a1', v: 'from A' }])
    let last = { page: '', daemon: '' }
    await until(
      "the page's state digest of the space is A's",
      async () => {
        last = { page: (await app<string>('digest', spaceId)) ?? '', daemon: await daemonDigest(alice.d, alice.identity, alice.key, spaceId) }
        return last.page !== '' && last.page === last.daemon
      },
      60_000,
      1_000,
    ).catch((e: unknown) => explain(new Error(`${(e as Error).message}: ${JSON.stringify(last)}`)))
    // The only peer the page ever had is the hub.
    expect(await app<string[]>('peers')).toEqual([hub.peerId])
    // The page registered what it holds: the hub keeps the shared space for it.
    await until('the hub keeps the shared space for the page', async () => (await app<any[]>('hubs'))[0].spaces.some((s: any) => s.spaceId === spaceId && s.state === 'kept'))
    console.log(`page via hub: ${total} objects in ${tObjects} ms, digest equal at ${ms(t0)} ms`)
  })

  it('the link to the hub drops: the page dials it again by itself and gets A’s next write', async () => {
    await app('hangUp', hub.peerId)
    const t0 = Date.now()
    await until('the page is connected to the hub again', async () => (await app<string[]>('peers')).includes(hub.peerId), 30_000, 100).catch(explain)
    const tRedial = ms(t0)
    await ok(alice.d, 'POST', `${S(spaceId)}/modify`, { objectId: target, dataset: 'notes', records: [{ id: 'a2', ops: [{ type: '$set', path: 'v', value: 'A again' }] }] })
    const t1 = Date.now()
    await until('A’s write in the page', async () => (await app<Array<{ id: string }>>('records', spaceId, target, 'notes')).some((r) => r.id === 'a2'), 30_000, 100).catch(explain)
    console.log(`page via hub: redialled in ${tRedial} ms; a live write of A arrived in ${ms(t1)} ms`)
  })

  it('writes offline and across a reload; once it reconnects, A’s daemon receives them through the hub, and the page gets what A wrote meanwhile', async () => {
    await app('offline')
    const ids = Array.from({ length: 10 }, (_, i) => `b${String(i).padStart(2, '0')}`)
    for (const id of ids) await app('write', spaceId, target, 'notes', id, `offline ${id}`)
    // The page is closed (a reload); A writes meanwhile, and has none of the page's writes.
    await page.reload()
    await ok(alice.d, 'POST', `${S(spaceId)}/modify`, {
      objectId: target,
      dataset: 'notes',
      records: [{ id: 'a3', ops: [{ type: '$set', path: 'v', value: 'while the page was closed' }] }],
    })
    await aliceSynced()
    const atA = async () =>
      ((await ok(alice.d, 'POST', `${S(spaceId)}/query`, { objectId: target, dataset: 'notes', sort: ['id'], limit: 100 })).records as Array<{ id: string; v: string }>) ?? []
    expect((await atA()).filter((r) => r.id.startsWith('b'))).toEqual([])

    await app('restore', bob.mnemonic)
    expect((await app<Array<{ id: string }>>('records', spaceId, target, 'notes')).map((r) => r.id).sort()).toEqual(['a1', 'a2', ...ids])
    const t0 = Date.now()
    await app('addHub', hub.ws).catch(explain)
    await until(
      'A’s daemon holds the page’s offline writes',
      async () => {
        const got = await atA()
        return ids.every((id) => got.some((r) => r.id === id && r.v === `offline ${id}`))
      },
      60_000,
      200,
    ).catch(explain)
    const tUp = ms(t0)
    await until(
      'the page holds what A wrote while it was closed',
      async () => (await app<Array<{ id: string }>>('records', spaceId, target, 'notes')).some((r) => r.id === 'a3'),
      60_000,
      200,
    ).catch(explain)
    expect(await app<string[]>('peers')).toEqual([hub.peerId])
    console.log(`page via hub: ${ids.length} offline writes at A ${tUp} ms after reconnecting; A's write in the page at ${ms(t0)} ms`)
  })
})
