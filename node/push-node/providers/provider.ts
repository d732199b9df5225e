import type { PushPlatform } from '../../../sync/protocol/push-wire.ts'

/**
 * What a provider carries to a device: the sealed payload (base64), the key id that opens it,
 * the space key, the collapse key and whether it is silent. Never plaintext: the node has none.
 */
export interface ProviderMessage {
  spaceKey: string
  keyId: string
  payload: string
  groupId?: string
  silent: boolean
}

/** `gone`: the provider says the token is dead (the node drops it); `failed`: anything else. */
export type ProviderResult = 'ok' | 'gone' | 'failed'

/** One platform push provider (APNs, FCM, UnifiedPush/ntfy, Web Push) behind one interface. */
export interface PushProvider {
  readonly platform: PushPlatform
  send(token: string, message: ProviderMessage): Promise<ProviderResult>
  close?(): void | Promise<void>
}

/** A response status as a result: 404/410 mean the token is gone (every provider agrees). */
export const resultOfStatus = (status: number): ProviderResult => (status >= 200 && status < 300 ? 'ok' : status === 404 || status === 410 ? 'gone' : 'failed')

/** Every provider call is bounded in time: a slow provider never holds a send forever. */
export const PROVIDER_TIMEOUT_MS = 15_000
