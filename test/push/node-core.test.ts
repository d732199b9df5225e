import { afterEach, describe, expect, it } from 'vitest'
import { decodePushRequest, encodePushReply, decodePushReply } from '../../sync/protocol/push-wire.ts'
import { fromBase64 } from '../../sync/core/base64.ts'
import { identityOf } from '../../sync/crypto/keys.ts'
import { ApnsProvider } from '../../node/push-node/providers/apns.ts'
import { WebPushProvider } from '../../node/push-node/providers/webpush.ts'
import webpush from 'web-push'
import { fakeApns, fakeFcm, fakeNtfy, type FakeHttp } from './fakes.ts'
import { attemptsSettled, coreWith, sendBytes, spaceKeyFor, subscribeBytes } from './node-fixture.ts'

const fakes: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const f of fakes.splice(0).reverse()) await f.close()
})
const track = <T extends { close(): Promise<void> }>(f: T) => (fakes.push(f), f)
/** A core closed before its store after the test (deliveries run after the reply). */
const tracked = (c: ReturnType<typeof coreWith>) => (fakes.push({ close: () => c.store.close() }, { close: () => c.core.close() }), c)
const ID = identityOf(spaceKeyFor(9).publicKey)

describe('push node core', () => {
  it('a subscription under a space key gets the sends to its topics, sealed bytes as sent, via ntfy and FCM', async () => {
    const ntfy = track(await fakeNtfy())
    const fcm = track(await fakeFcm())
    const { core, store } = tracked(coreWith({ fcm, ntfy: [ntfy] }))
    const k = spaceKeyFor(1)
    expect(await core.handle('p1', await subscribeBytes(k, 'ntfy', `${ntfy.url}/up/b`, ['chats']))).toEqual({ ok: true, validTopics: 1 })
    expect(await core.handle('p1', await subscribeBytes(k, 'android', 'fcm-token-b', [ID, 'bad topic!']))).toEqual({ ok: true, validTopics: 1 })
    const payload = new Uint8Array(50).map((_, i) => i)
    const r = await core.handle('p2', await sendBytes(k, ['chats', ID], payload, Date.now(), { groupId: 'g1' }))
    // Answered once queued: the reply says nothing of the providers.
    expect(r).toEqual({ ok: true, validTopics: 2 })
    const [n] = await ntfy.waitFor(1)
    expect(n.path).toBe('/up/b')
    const msg = JSON.parse(n.body)
    expect(fromBase64(msg.payload)).toEqual(payload)
    expect(msg).toMatchObject({ spaceKey: identityOf(k.publicKey), keyId: 'ab'.repeat(32), groupId: 'g1', silent: false })
    const [f] = await fcm.waitFor(1)
    expect(f.path).toBe('/v1/projects/p/messages:send')
    expect(JSON.parse(f.body).message).toMatchObject({ token: 'fcm-token-b', data: { payload: msg.payload, groupId: 'g1' }, android: { collapse_key: 'g1' } })
    // A topic nobody holds: nothing forwarded.
    expect(await core.handle('p2', await sendBytes(k, ['chats/' + 'f'.repeat(64)]))).toEqual({ ok: true, validTopics: 1 })
    expect(await core.handle('p2', await sendBytes(k, ['not a topic']))).toEqual({ ok: true, validTopics: 0 })
    await attemptsSettled(core, 2)
    await new Promise((r) => setTimeout(r, 100))
    expect(core.counters.forwarded).toBe(2)
    expect(ntfy.received.length + fcm.received.length).toBe(2)
    expect((await store.totals()).subscriptions).toBe(2)
  })

  it('a provider saying the token is gone drops it; unregister drops a token everywhere', async () => {
    const ntfy = track(await fakeNtfy())
    const { core, store } = tracked(coreWith({ ntfy: [ntfy] }))
    const k = spaceKeyFor(1)
    const tok = `${ntfy.url}/gone`
    await core.handle('p', await subscribeBytes(k, 'ntfy', tok, ['chats']))
    ntfy.status = 410
    expect(await core.handle('p', await sendBytes(k, ['chats']))).toEqual({ ok: true, validTopics: 1 })
    await attemptsSettled(core, 1)
    expect(await store.targetsFor(identityOf(k.publicKey), ['chats'])).toEqual([])
    expect(core.counters.tokensDropped).toBe(1)
    ntfy.status = 200
    await core.handle('p', await subscribeBytes(k, 'ntfy', tok, ['chats']))
    const { encodePushRequest } = await import('../../sync/protocol/push-wire.ts')
    expect(await core.handle('p', encodePushRequest({ op: 'unregister', platform: 'ntfy', token: tok, ts: Date.now() }))).toEqual({ ok: true })
    expect(await store.targetsFor(identityOf(k.publicKey), ['chats'])).toEqual([])
  })

  it('FCM caches its OAuth token across sends', async () => {
    const fcm = track(await fakeFcm())
    const { core } = tracked(coreWith({ fcm }))
    const k = spaceKeyFor(2)
    await core.handle('p', await subscribeBytes(k, 'android', 't1', ['chats']))
    for (let i = 0; i < 3; i++) await core.handle('p', await sendBytes(k, ['chats']))
    await fcm.waitFor(3)
    expect(fcm.tokenRequests).toBe(1)
  })

  it('APNs: HTTP/2 with an ES256 provider token; silent pushes are background pushes', async () => {
    const apns = track(await fakeApns())
    const provider = new ApnsProvider(apns.config)
    try {
      const { core } = tracked(coreWith({ providers: [provider] }))
      const k = spaceKeyFor(3)
      await core.handle('p', await subscribeBytes(k, 'ios', 'ab'.repeat(32), ['chats', ID]))
      await core.handle('p', await sendBytes(k, ['chats'], undefined, Date.now(), { groupId: 'g' }))
      await apns.waitFor(1)
      await core.handle('p', await sendBytes(k, [ID], undefined, Date.now(), { silent: true }))
      const [loud, silent] = await apns.waitFor(2)
      await attemptsSettled(core, 2)
      expect(core.counters.forwarded).toBe(2)
      expect(loud.path).toBe(`/3/device/${'ab'.repeat(32)}`)
      expect(loud.headers).toMatchObject({ 'apns-topic': 'org.svc.app', 'apns-push-type': 'alert', 'apns-collapse-id': 'g' })
      expect(JSON.parse(loud.body).aps['mutable-content']).toBe(1)
      expect(silent.headers['apns-push-type']).toBe('background')
      expect(JSON.parse(silent.body).aps['content-available']).toBe(1)
    } finally {
      provider.close()
    }
  })

  it('Web Push: VAPID-signed, RFC 8291-encrypted (aes128gcm) POST to the subscription endpoint', async () => {
    const svc: FakeHttp = track(await fakeNtfy())
    const vapid = webpush.generateVAPIDKeys()
    // The fake is on loopback: only the test option lets the node reach it (test/security/push-endpoints.test.ts checks the rule).
    const { core } = tracked(coreWith({ providers: [new WebPushProvider({ subject: 'mailto:ops@example.org', ...vapid, allowHttp: true, allowPrivateEndpoints: true })] }))
    // A browser's subscription keys (P-256 ECDH public key and auth secret).
    const { createECDH, randomBytes } = await import('node:crypto')
    const ecdh = createECDH('prime256v1')
    ecdh.generateKeys()
    const sub = { endpoint: `${svc.url}/wp/1`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } }
    const k = spaceKeyFor(4)
    await core.handle('p', await subscribeBytes(k, 'webpush', JSON.stringify(sub), ['chats']))
    expect(await core.handle('p', await sendBytes(k, ['chats']))).toEqual({ ok: true, validTopics: 1 })
    const [r] = await svc.waitFor(1)
    expect(r.path).toBe('/wp/1')
    expect(r.headers['content-encoding']).toBe('aes128gcm')
    expect(String(r.headers.authorization)).toMatch(/^vapid t=.+, k=/)
  })

  it('a send to more devices than the node calls at once reaches every one (the rest wait queued for a slot)', async () => {
    const ntfy = track(await fakeNtfy())
    const { core, store } = tracked(coreWith({ ntfy: [ntfy] }))
    const k = spaceKeyFor(5)
    for (let i = 0; i < 45; i++) await core.handle('p', await subscribeBytes(k, 'ntfy', `${ntfy.url}/d${i}`, ['chats']))
    await core.handle('p', await sendBytes(k, ['chats']))
    const got = await ntfy.waitFor(45)
    expect(new Set(got.map((r) => r.path)).size).toBe(45)
    await attemptsSettled(core, 45)
    expect((await store.queueStats(Date.now())).depth).toBe(0)
  })

  it("Web Push endpoints that stall hold at most their own platform's slots: an ntfy push still goes at once", async () => {
    // Accepts connections and never answers: each Web Push attempt holds its slot until the timeout.
    const { createServer } = await import('node:http')
    const stall = createServer(() => undefined)
    await new Promise<void>((r) => stall.listen(0, '127.0.0.1', r))
    fakes.push({ close: () => (stall.closeAllConnections(), new Promise<void>((r) => stall.close(() => r()))) })
    const stallUrl = `http://127.0.0.1:${(stall.address() as { port: number }).port}`
    const ntfy = track(await fakeNtfy())
    const vapid = webpush.generateVAPIDKeys()
    const { createECDH, randomBytes } = await import('node:crypto')
    const ecdh = createECDH('prime256v1')
    ecdh.generateKeys()
    const keys = { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') }
    const { NtfyProvider } = await import('../../node/push-node/providers/ntfy.ts')
    const { core } = tracked(
      coreWith({
        providers: [
          new WebPushProvider({ subject: 'mailto:ops@example.org', ...vapid, allowHttp: true, allowPrivateEndpoints: true }),
          new NtfyProvider({ allowHttp: true, allowedOrigins: [ntfy.url] }),
        ],
      }),
    )
    const slow = spaceKeyFor(6)
    for (let i = 0; i < 40; i++) await core.handle('p', await subscribeBytes(slow, 'webpush', JSON.stringify({ endpoint: `${stallUrl}/s${i}`, keys }), ['chats']))
    await core.handle('p', await sendBytes(slow, ['chats']))
    const fast = spaceKeyFor(7)
    await core.handle('p', await subscribeBytes(fast, 'ntfy', `${ntfy.url}/phone`, ['chats']))
    await new Promise((r) => setTimeout(r, 100))
    const t0 = Date.now()
    await core.handle('p', await sendBytes(fast, ['chats']))
    await ntfy.waitFor(1, 3_000)
    expect(Date.now() - t0).toBeLessThan(2_000)
    expect(await core.queue()).toMatchObject({ depth: 40, inFlight: 16 })
  })

  it('the reply codec round-trips; a request decodes to what was signed', async () => {
    const bytes = await sendBytes(spaceKeyFor(1), ['chats'])
    expect(decodePushRequest(bytes)).toMatchObject({ op: 'send', topics: ['chats'], silent: false })
    expect(decodePushReply(encodePushReply({ ok: false, code: 'forged' }))).toEqual({ ok: false, code: 'forged' })
  })
})
