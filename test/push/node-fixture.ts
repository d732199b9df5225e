import { nobleProvider } from '../../sync/crypto/provider.ts'
import { keyPairFromSeed, type KeyPair } from '../../sync/crypto/keys.ts'
import { encodePushRequest, signSend, signSubscribe, type PushPlatform } from '../../sync/protocol/push-wire.ts'
import { PushNodeCore } from '../../node/push-node/core.ts'
import { SqliteSubscriptionStore } from '../../node/push-node/sqlite-store.ts'
import { NtfyProvider } from '../../node/push-node/providers/ntfy.ts'
import { FcmProvider } from '../../node/push-node/providers/fcm.ts'
import type { PushProvider } from '../../node/push-node/providers/provider.ts'
import type { FakeFcm } from './fakes.ts'

export const crypto = nobleProvider
export const spaceKeyFor = (n: number): KeyPair => keyPairFromSeed(new Uint8Array(32).fill(100 + n))

/** A node core on an in-memory store with ntfy (http allowed) and, given a fake, FCM. */
export function coreWith(opts: { fcm?: FakeFcm; now?: () => number; providers?: PushProvider[] } = {}) {
  const store = new SqliteSubscriptionStore()
  const providers: PushProvider[] = opts.providers ?? [new NtfyProvider({ allowHttp: true }), ...(opts.fcm ? [new FcmProvider(opts.fcm.serviceAccount)] : [])]
  const core = new PushNodeCore({ store, providers, crypto, now: opts.now })
  return { core, store }
}

export async function subscribeBytes(key: KeyPair, platform: PushPlatform, token: string, topics: string[], ts = Date.now()) {
  return encodePushRequest(await signSubscribe(crypto, key, { platform, token, topics, ts }))
}

export async function sendBytes(key: KeyPair, topics: string[], payload = new Uint8Array(40).fill(1), ts = Date.now(), extra: { groupId?: string; silent?: boolean } = {}) {
  return encodePushRequest(await signSend(crypto, key, { topics, keyId: 'ab'.repeat(32), payload, silent: extra.silent ?? false, ts, ...(extra.groupId ? { groupId: extra.groupId } : {}) }))
}
