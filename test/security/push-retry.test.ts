import { afterEach, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { identityOf } from '../../sync/crypto/keys.ts'
import { PushNodeServer, type PushNodeConfig } from '../../node/push-node/server.ts'
import { fakeFcm, fakeNtfy } from '../push/fakes.ts'
import { attemptsSettled, coreWith, sendBytes, spaceKeyFor, subscribeBytes } from '../push/node-fixture.ts'

/**
 * Issue 33 item 5: a provider answering 5xx or timing out lost the notification (the node said
 * `delivered: 0` and nothing retried). Deliveries now wait in the node's store and are retried
 * with backoff, honoring Retry-After, across a restart; 404/410 drop the token.
 */
const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c()
})

describe('a provider error is retried, not lost', () => {
  it('FCM answering 503 with Retry-After is asked again after that pause, and the payload arrives once', async () => {
    const fcm = await fakeFcm()
    cleanup.push(() => fcm.close())
    fcm.script.push({ status: 503, headers: { 'retry-after': '1' } })
    const { core, store } = coreWith({ fcm, retry: { baseMs: 50, maxMs: 10_000, attempts: 5 } })
    cleanup.push(
      () => store.close(),
      () => core.close(),
    )
    const k = spaceKeyFor(1)
    await core.handle('p', await subscribeBytes(k, 'android', 'fcm-token', ['chats']))
    await core.handle('p', await sendBytes(k, ['chats'], new Uint8Array([1, 2, 3])))
    const [first, second] = await fcm.waitFor(2, 15_000)
    expect(second.body).toBe(first.body)
    // Retry-After (1 s) wins over the 50 ms backoff.
    expect(second.at - first.at).toBeGreaterThanOrEqual(950)
    await new Promise((r) => setTimeout(r, 300))
    expect(fcm.received).toHaveLength(2)
    expect(core.counters).toMatchObject({ forwarded: 1, providerFailed: 1, retried: 1 })
  })

  it('a provider answering 5xx is retried with growing backoff until it takes the push; 410 drops the token and its pending retries', async () => {
    const ntfy = await fakeNtfy()
    cleanup.push(() => ntfy.close())
    ntfy.script.push({ status: 502 }, { status: 500 })
    const { core, store } = coreWith({ ntfy: [ntfy], retry: { baseMs: 100, maxMs: 1_000, attempts: 5 } })
    cleanup.push(
      () => store.close(),
      () => core.close(),
    )
    const k = spaceKeyFor(2)
    await core.handle('p', await subscribeBytes(k, 'ntfy', `${ntfy.url}/phone`, ['chats']))
    await core.handle('p', await sendBytes(k, ['chats']))
    const got = await ntfy.waitFor(3, 15_000)
    // Backoff grows: the second pause is longer than the first.
    expect(got[2].at - got[1].at).toBeGreaterThan(got[1].at - got[0].at)
    expect(core.counters).toMatchObject({ forwarded: 1, providerFailed: 2, retried: 2 })
    ntfy.status = 410
    await core.handle('p', await sendBytes(k, ['chats']))
    await attemptsSettled(core, 4)
    expect(await store.targetsFor(identityOf(k.publicKey), ['chats'])).toEqual([])
    expect(core.counters.tokensDropped).toBe(1)
    expect((await store.queueStats(Date.now())).depth).toBe(0)
  })

  it('a retry gives up after its attempts; the queue is empty again', async () => {
    const ntfy = await fakeNtfy()
    cleanup.push(() => ntfy.close())
    ntfy.status = 503
    const { core, store } = coreWith({ ntfy: [ntfy], retry: { baseMs: 20, maxMs: 50, attempts: 3 } })
    cleanup.push(
      () => store.close(),
      () => core.close(),
    )
    const k = spaceKeyFor(3)
    await core.handle('p', await subscribeBytes(k, 'ntfy', `${ntfy.url}/x`, ['chats']))
    await core.handle('p', await sendBytes(k, ['chats']))
    await ntfy.waitFor(3, 10_000)
    await attemptsSettled(core, 3)
    await new Promise((r) => setTimeout(r, 300))
    expect(ntfy.received).toHaveLength(3)
    expect(core.counters).toMatchObject({ providerFailed: 3, retried: 2, gaveUp: 1 })
    expect((await store.queueStats(Date.now())).depth).toBe(0)
  })
})

describe('the retry queue survives a node restart and shows in the health endpoint', () => {
  it('a delivery failed before a restart reaches the provider from the restarted node; health shows depth and failures', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-push-retry-'))
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }))
    const fcm = await fakeFcm()
    cleanup.push(() => fcm.close())
    fcm.status = 503
    const cfg: PushNodeConfig = {
      keySeed: randomBytes(32).toString('hex'),
      listen: ['/ip4/127.0.0.1/tcp/0'],
      store: `sqlite:${join(dir, 'node.db')}`,
      providers: { fcm: fcm.serviceAccount },
      retry: { baseMs: 200, maxMs: 2_000, attempts: 8 },
    }
    const first = await PushNodeServer.start(cfg)
    let firstOpen = true
    cleanup.push(() => firstOpen && first.close())
    const k = spaceKeyFor(4)
    await first.core.handle('p', await subscribeBytes(k, 'android', 'tok-restart', ['chats']))
    await first.core.handle('p', await sendBytes(k, ['chats'], new Uint8Array([9, 9, 9])))
    await fcm.waitFor(1)
    await attemptsSettled(first.core, 1)
    const health = (await (await fetch(first.healthUrl)).json()) as { queue?: { depth: number }; counters: { providerFailed: number } }
    expect(health.counters.providerFailed).toBeGreaterThanOrEqual(1)
    expect(health.queue?.depth).toBe(1)
    await first.close()
    firstOpen = false
    fcm.status = 200
    const before = fcm.received.length
    const second = await PushNodeServer.start(cfg)
    cleanup.push(() => second.close())
    const got = await fcm.waitFor(before + 1, 15_000)
    expect(got[got.length - 1].body).toBe(got[0].body)
    await attemptsSettled(second.core, 1)
    const after = (await (await fetch(second.healthUrl)).json()) as { queue?: { depth: number } }
    expect(after.queue?.depth).toBe(0)
  })
})
