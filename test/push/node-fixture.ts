import { nobleProvider } from '../../sync/crypto/provider.ts'
import { keyPairFromSeed, type KeyPair } from '../../sync/crypto/keys.ts'
import { encodePushRequest, signSend, signSubscribe, type PushPlatform } from '../../sync/protocol/push-wire.ts'
import { PushNodeCore, type PushNodeBounds, type RetryPolicy } from '../../node/push-node/core.ts'
import { SqliteSubscriptionStore } from '../../node/push-node/sqlite-store.ts'
import { NtfyProvider } from '../../node/push-node/providers/ntfy.ts'
import { FcmProvider } from '../../node/push-node/providers/fcm.ts'
import type { PushProvider } from '../../node/push-node/providers/provider.ts'
import type { FakeFcm, FakeHttp } from './fakes.ts'

export const crypto = nobleProvider
export const spaceKeyFor = (n: number): KeyPair => keyPairFromSeed(new Uint8Array(32).fill(100 + n))

/**
 * A node core on an in-memory store with ntfy (http allowed, only the given fakes' origins: an
 * ntfy endpoint elsewhere is refused) and, given a fake, FCM.
 */
export function coreWith(opts: { fcm?: FakeFcm; ntfy?: FakeHttp[]; now?: () => number; providers?: PushProvider[]; bounds?: PushNodeBounds; retry?: RetryPolicy } = {}) {
  const store = new SqliteSubscriptionStore()
  const ntfy = new NtfyProvider({ allowHttp: true, allowedOrigins: (opts.ntfy ?? []).map((f) => f.url) })
  const providers: PushProvider[] = opts.providers ?? [ntfy, ...(opts.fcm ? [new FcmProvider(opts.fcm.serviceAccount)] : [])]
  const core = new PushNodeCore({ store, providers, crypto, now: opts.now, bounds: opts.bounds, retry: opts.retry })
  return { core, store }
}

/** Provider attempts the node has concluded, whatever their outcome (one counter moves per attempt). */
export function attemptsOf(core: PushNodeCore): number {
  const c = core.counters as PushNodeCore['counters'] & { endpointsRefused?: number }
  return c.forwarded + c.providerFailed + c.tokensDropped + (c.endpointsRefused ?? 0)
}

/** Waits until the node concluded `n` provider attempts (deliveries run after the reply). */
export async function attemptsSettled(core: PushNodeCore, n: number, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (attemptsOf(core) < n) {
    if (Date.now() > until) throw new Error(`the node concluded ${attemptsOf(core)} of ${n} provider attempts`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

export async function subscribeBytes(key: KeyPair, platform: PushPlatform, token: string, topics: string[], ts = Date.now()) {
  return encodePushRequest(await signSubscribe(crypto, key, { platform, token, topics, ts }))
}

export async function sendBytes(key: KeyPair, topics: string[], payload = new Uint8Array(40).fill(1), ts = Date.now(), extra: { groupId?: string; silent?: boolean } = {}) {
  return encodePushRequest(
    await signSend(crypto, key, { topics, keyId: 'ab'.repeat(32), payload, silent: extra.silent ?? false, ts, ...(extra.groupId ? { groupId: extra.groupId } : {}) }),
  )
}
