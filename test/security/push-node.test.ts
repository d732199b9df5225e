import { afterEach, describe, expect, it } from 'vitest'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { identityOf } from '../../sync/crypto/keys.ts'
import { PUSH_LIMITS } from '../../sync/modules/push/limits.ts'
import { decodePushRequest, encodePushRequest, signSubscribe, PUSH_WIRE_LIMITS, type SendRequest, type SubscribeRequest } from '../../sync/protocol/push-wire.ts'
import { fakeNtfy, type FakeHttp } from '../push/fakes.ts'
import { attemptsOf, coreWith, crypto, sendBytes, spaceKeyFor, subscribeBytes } from '../push/node-fixture.ts'

let ntfy: FakeHttp | undefined
afterEach(async () => {
  await ntfy?.close()
  ntfy = undefined
})

describe('forged registration: a subscription not signed by the space key it names', () => {
  it('is refused as forged and stores nothing', async () => {
    const { core, store } = coreWith()
    const victim = spaceKeyFor(1)
    const attacker = spaceKeyFor(2)
    const signed = await signSubscribe(crypto, attacker, { platform: 'ntfy', token: 'https://evil.example/x', topics: ['chats'], ts: Date.now() })
    // Names the victim's space key, signed by the attacker's.
    const forged = encodePushRequest({ ...signed, spaceKey: identityOf(victim.publicKey) })
    expect(await core.handle('p', forged)).toEqual({ ok: false, code: 'forged' })
    // A valid signature with one topic changed after signing.
    const tampered = decodePushRequest(await subscribeBytes(victim, 'ntfy', 'https://evil.example/x', ['chats'])) as SubscribeRequest
    expect(await core.handle('p', encodePushRequest({ ...tampered, topics: ['chats', identityOf(attacker.publicKey)] }))).toEqual({ ok: false, code: 'forged' })
    expect(await store.totals()).toEqual({ subscriptions: 0, spaceKeys: 0 })
    expect(core.counters.refused.forged).toBe(2)
  })
})

describe('topics of another space key: a holder of one space key reaching another space', () => {
  it("its subscriptions live only in its own namespace: another space's sends never reach it", async () => {
    ntfy = await fakeNtfy()
    const { core, store } = coreWith({ ntfy: [ntfy] })
    const mine = spaceKeyFor(1)
    const other = spaceKeyFor(2)
    await core.handle('p', await subscribeBytes(mine, 'ntfy', `${ntfy.url}/spy`, ['chats']))
    expect(await core.handle('p', await sendBytes(other, ['chats']))).toEqual({ ok: true, validTopics: 1 })
    expect((await store.queueStats(Date.now())).depth).toBe(0)
    await new Promise((r) => setTimeout(r, 100))
    expect(attemptsOf(core)).toBe(0)
    expect(ntfy.received).toEqual([])
    await core.close()
  })

  it("a forged send into another space's topics is refused and reaches nobody", async () => {
    ntfy = await fakeNtfy()
    const { core } = coreWith({ ntfy: [ntfy] })
    const victim = spaceKeyFor(1)
    await core.handle('p', await subscribeBytes(victim, 'ntfy', `${ntfy.url}/victim`, ['chats']))
    const req = decodePushRequest(await sendBytes(spaceKeyFor(3), ['chats'])) as SendRequest
    expect(await core.handle('p', encodePushRequest({ ...req, spaceKey: identityOf(victim.publicKey) }))).toEqual({ ok: false, code: 'forged' })
    expect(ntfy.received).toEqual([])
  })
})

describe('replay: an old signed request sent again later', () => {
  it('is refused as stale past the skew window', async () => {
    const { core } = coreWith()
    const old = await subscribeBytes(spaceKeyFor(1), 'ntfy', 'https://x.example/a', ['chats'], Date.now() - PUSH_LIMITS.requestSkewMs - 1000)
    expect(await core.handle('p', old)).toEqual({ ok: false, code: 'stale' })
  })
})

describe('flood: registrations and sends past the per-peer and per-space-key rates', () => {
  it('a peer past its registration burst is refused before any signature check', async () => {
    let now = 1_700_000_000_000
    const { core } = coreWith({ now: () => now })
    const k = spaceKeyFor(1)
    const results = []
    for (let i = 0; i < PUSH_LIMITS.registrationsBurst + 5; i++)
      results.push(await core.handle('flooder', await subscribeBytes(k, 'ntfy', `https://x.example/${i % 3}`, ['chats'], now)))
    expect(results.filter((r) => !r.ok && r.code === 'rate_limited').length).toBe(5)
    // Another peer with the same space key is held by the space key's bucket.
    expect(await core.handle('other', await subscribeBytes(k, 'ntfy', 'https://x.example/z', ['chats'], now))).toEqual({ ok: false, code: 'rate_limited' })
    // The buckets refill with time.
    now += 60_000
    expect(await core.handle('flooder', await subscribeBytes(k, 'ntfy', 'https://x.example/z', ['chats'], now))).toMatchObject({ ok: true })
  })
})

describe('oversize: payloads, topic lists and tokens past their bounds', () => {
  it('a sealed payload over the limit is refused; a topic list over the request limit is malformed', async () => {
    const { core } = coreWith()
    const k = spaceKeyFor(1)
    expect(await core.handle('p', await sendBytes(k, ['chats'], new Uint8Array(PUSH_LIMITS.maxSealedBytes + 1)))).toEqual({ ok: false, code: 'too_large' })
    const many = Array.from({ length: PUSH_WIRE_LIMITS.maxTopicsPerRequest + 1 }, (_, i) => `chats/${i.toString(16).padStart(64, '0')}`)
    expect(await core.handle('p', await subscribeBytes(k, 'ntfy', 'https://x.example/a', many))).toEqual({ ok: false, code: 'malformed' })
    expect(await core.handle('p', await subscribeBytes(k, 'ntfy', 'x'.repeat(PUSH_WIRE_LIMITS.maxTokenBytes + 1), ['chats']))).toEqual({ ok: false, code: 'malformed' })
  })

  it('a space key holds a bounded number of tokens', async () => {
    const { core, store } = coreWith()
    const k = spaceKeyFor(1)
    const sk = identityOf(k.publicKey)
    // Fill the table directly (the rate limit would take hours), then ask through the node.
    for (let i = 0; i < PUSH_LIMITS.maxTokensPerSpaceKey; i++) await store.setTopics(sk, { platform: 'ntfy', token: `https://x.example/${i}` }, ['chats'])
    expect(await core.handle('p', await subscribeBytes(k, 'ntfy', 'https://x.example/new', ['chats']))).toEqual({ ok: false, code: 'too_many_tokens' })
    // A token already there may still change its topics.
    expect(await core.handle('p', await subscribeBytes(k, 'ntfy', 'https://x.example/1', ['chats', 'chats/' + 'a'.repeat(64)]))).toEqual({ ok: true, validTopics: 2 })
  })
})

describe('garbage: bytes that are not a push request', () => {
  it('is refused as malformed, never thrown', async () => {
    const { core } = coreWith()
    for (const b of [
      new Uint8Array(0),
      new Uint8Array([0xff, 0x00, 0x13]),
      encodeCanonical({ v: 1, op: 'send' }),
      encodeCanonical({ v: 2, op: 'unregister', platform: 'ntfy', token: 'x', ts: Date.now() }),
      encodeCanonical([1, 2, 3]),
    ]) {
      expect(await core.handle('p', b)).toEqual({ ok: false, code: 'malformed' })
    }
  })
})

describe('endpoint abuse: a UnifiedPush endpoint aimed at a plain-http or unlisted host', () => {
  // More in test/security/push-endpoints.test.ts (Web Push address rules, the reply to a send).
  it('the ntfy provider refuses it (the token is dropped, no request leaves)', async () => {
    const { NtfyProvider } = await import('../../node/push-node/providers/ntfy.ts')
    const strict = new NtfyProvider({ allowedOrigins: ['https://ntfy.example.org'] })
    expect(strict.endpointOk('https://ntfy.example.org/up/1')).toBe(true)
    expect(strict.endpointOk('https://169.254.169.254/latest')).toBe(false)
    expect(new NtfyProvider({ allowedOrigins: ['http://127.0.0.1:22'] }).endpointOk('http://127.0.0.1:22/')).toBe(false)
    expect(await new NtfyProvider().send('http://127.0.0.1:9/', { spaceKey: 'k', keyId: 'i', payload: '', silent: true })).toMatchObject({ kind: 'refused' })
  })
})
