import { afterEach, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createECDH, randomBytes } from 'node:crypto'
import webpush from 'web-push'
import { WebPushProvider } from '../../node/push-node/providers/webpush.ts'
import { NtfyProvider } from '../../node/push-node/providers/ntfy.ts'
import type { PushNodeCore } from '../../node/push-node/core.ts'
import { fakeNtfy, type FakeHttp } from '../push/fakes.ts'
import { attemptsSettled, coreWith, sendBytes, spaceKeyFor, subscribeBytes } from '../push/node-fixture.ts'

/**
 * Issue 33 item 4: a stranger with a fresh key mints a space key and registers a token pointing
 * at an internal URL; the node must not POST there, and its reply to a send must not tell a
 * delivered endpoint from a refused or unreachable one (else it is a port scanner).
 */
const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c()
})
const fake = async () => {
  const f = await fakeNtfy()
  cleanup.push(() => f.close())
  return f
}
const withCore = (o: Parameters<typeof coreWith>[0]) => {
  const c = coreWith(o)
  cleanup.push(
    () => c.store.close(),
    () => c.core.close(),
  )
  return c
}
const vapid = webpush.generateVAPIDKeys()
const subscriptionTo = (endpoint: string) => {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  return JSON.stringify({ endpoint, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } })
}
const port = (f: FakeHttp) => new URL(f.url).port

/** Subscribes each token under its own space key (a stranger's fresh one) and sends once to each. */
async function subscribeAndSend(core: PushNodeCore, platform: 'webpush' | 'ntfy', tokens: string[], firstKey = 1) {
  const replies = []
  for (const [i, token] of tokens.entries()) {
    const k = spaceKeyFor(firstKey + i)
    expect(await core.handle('stranger', await subscribeBytes(k, platform, token, ['chats']))).toMatchObject({ ok: true })
    replies.push(await core.handle('stranger', await sendBytes(k, ['chats'])))
  }
  return replies
}

describe('Web Push endpoints: https hosts with public addresses only, checked after resolution', () => {
  it('an endpoint on loopback (literal, mapped, or a name resolving there) is refused: no request reaches it', async () => {
    const internal = await fake()
    // allowHttp lets the plain-http fake be reached at all; allowPrivateEndpoints stays off.
    const { core } = withCore({ providers: [new WebPushProvider({ subject: 'mailto:ops@example.org', ...vapid, allowHttp: true })] })
    const endpoints = [`http://127.0.0.1:${port(internal)}/a`, `http://localhost:${port(internal)}/b`, `http://[::ffff:127.0.0.1]:${port(internal)}/c`]
    await subscribeAndSend(core, 'webpush', endpoints.map(subscriptionTo))
    await attemptsSettled(core, endpoints.length)
    expect(internal.received.map((r) => r.path)).toEqual([])
  })

  it('plain http is refused without allowHttp, whatever the address', async () => {
    const internal = await fake()
    const { core } = withCore({ providers: [new WebPushProvider({ subject: 'mailto:ops@example.org', ...vapid, allowPrivateEndpoints: true })] })
    await subscribeAndSend(core, 'webpush', [subscriptionTo(`${internal.url}/plain`)])
    await attemptsSettled(core, 1)
    expect(internal.received).toEqual([])
  })

  it('the address classes: private, loopback, link-local, CGNAT, multicast, documentation, mapped and NAT64 forms are not public', async () => {
    const { isPublicAddress } = await import('../../node/push-node/endpoints.ts')
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '192.0.2.7',
      '198.18.0.1',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12::1',
      'ff02::1',
      '::ffff:10.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::a00:1',
      '2002:a00:1::1',
      '2001:db8::1',
    ]) {
      expect([a, isPublicAddress(a)]).toEqual([a, false])
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '142.250.74.78', '2a00:1450:4001:80b::200a', '64:ff9b::808:808', '::ffff:8.8.8.8']) expect([a, isPublicAddress(a)]).toEqual([a, true])
  })

  it('the connection goes to the address that was checked (pinned), resolved once per attempt; redirects are not followed', async () => {
    const pinned = await fake()
    const target = await fake()
    let lookups = 0
    // A rebinding resolver: the first answer is where the fake listens, any later one elsewhere.
    // Loopback is allowed here only through the test option; the rule itself is checked above.
    const resolve = async () => (++lookups === 1 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '127.0.0.2', family: 4 }])
    const provider = new WebPushProvider({ subject: 'mailto:ops@example.org', ...vapid, allowHttp: true, allowPrivateEndpoints: true, resolve })
    const { core } = withCore({ providers: [provider] })
    await subscribeAndSend(core, 'webpush', [subscriptionTo(`http://push.rebind.test:${port(pinned)}/wp`)])
    const [got] = await pinned.waitFor(1, 10_000)
    expect(got.headers.host).toBe(`push.rebind.test:${port(pinned)}`)
    expect(lookups).toBe(1)
    // A push service answering a redirect: the node does not follow it.
    pinned.script.push({ status: 307, headers: { location: `${target.url}/elsewhere` } })
    lookups = 0
    await subscribeAndSend(core, 'webpush', [subscriptionTo(`http://push.rebind.test:${port(pinned)}/redirects`)], 10)
    await pinned.waitFor(2, 10_000)
    await new Promise((r) => setTimeout(r, 200))
    expect(target.received).toEqual([])
  })
})

describe("UnifiedPush (ntfy) endpoints: an origin allowlist, by default the operator's own ntfy server", () => {
  it('with only a server configured, an endpoint on another origin is refused and nothing is sent', async () => {
    const internal = await fake()
    const ntfy = new NtfyProvider({ server: 'https://ntfy.example.org', allowHttp: true })
    expect(ntfy.endpointOk('https://ntfy.example.org/up/1')).toBe(true)
    expect(ntfy.endpointOk(`${internal.url}/x`)).toBe(false)
    expect(ntfy.endpointOk('https://ntfy.example.org.evil.test/up')).toBe(false)
    // Neither a server nor a list: no endpoint at all, never "anything https".
    expect(new NtfyProvider({}).endpointOk('https://ntfy.example.org/up/1')).toBe(false)
    const { core } = withCore({ providers: [ntfy] })
    await subscribeAndSend(core, 'ntfy', [`${internal.url}/admin`, `http://localhost:${port(internal)}/metrics`])
    await attemptsSettled(core, 2)
    expect(internal.received).toEqual([])
  })
})

describe('the reply to a send says nothing about the endpoint', () => {
  it('delivered, refused, unreachable and hanging endpoints get the same reply, before any provider answers', async () => {
    const up = await fake()
    const closed = await fake()
    const deadUrl = closed.url
    await closed.close()
    cleanup.pop()
    // Accepts the connection and never answers: a firewalled internal port.
    const hanging: Server = createServer(() => undefined)
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r))
    const hangUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`
    cleanup.push(() => {
      hanging.closeAllConnections()
      return new Promise((r) => hanging.close(r))
    })
    const { core } = withCore({ ntfy: [up, { url: deadUrl } as FakeHttp, { url: hangUrl } as FakeHttp] })
    const t0 = Date.now()
    const replies = await subscribeAndSend(core, 'ntfy', [`${up.url}/ok`, `${deadUrl}/dead`, 'https://unlisted.example/x', `${hangUrl}/hang`])
    const elapsed = Date.now() - t0
    await up.waitFor(1)
    expect(replies).toEqual([replies[0], replies[0], replies[0], replies[0]])
    expect(replies[0]).toEqual({ ok: true, validTopics: 1 })
    expect(elapsed).toBeLessThan(3_000)
  })
})
