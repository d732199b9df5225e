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

/**
 * One attempt's outcome. `gone`: the provider says the token is dead (404/410: the node drops
 * it); `retry`: worth asking again (5xx, 429, 408, a timeout, a network error), after
 * `retryAfterMs` when the provider said so; `failed`: the provider refused this message for good;
 * `refused`: the node's endpoint rules kept it from sending at all (the token is dropped).
 */
export type ProviderResult =
  { kind: 'ok' } | { kind: 'gone'; status: number } | { kind: 'retry'; why: string; retryAfterMs?: number } | { kind: 'failed'; why: string } | { kind: 'refused'; why: string }

/** One platform push provider (APNs, FCM, UnifiedPush/ntfy, Web Push) behind one interface. */
export interface PushProvider {
  readonly platform: PushPlatform
  /** `signal` aborts the attempt (the node closing); every attempt is also bounded by PROVIDER_TIMEOUT_MS. */
  send(token: string, message: ProviderMessage, signal?: AbortSignal): Promise<ProviderResult>
  close?(): void | Promise<void>
}

/**
 * `Retry-After` as milliseconds: delay-seconds or an HTTP date (RFC 9110 10.2.3); undefined when
 * absent or unreadable. Capped by the caller's retry policy, never trusted to be small.
 */
export function retryAfterMs(header: string | string[] | undefined | null, now = Date.now()): number | undefined {
  const v = Array.isArray(header) ? header[0] : header
  if (!v) return undefined
  if (/^\s*\d+\s*$/.test(v)) return Number(v) * 1000
  const at = Date.parse(v)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** A response status as a result: 404/410 mean the token is gone (every provider agrees). */
export function resultOfStatus(status: number, retryAfter?: string | string[] | null): ProviderResult {
  if (status >= 200 && status < 300) return { kind: 'ok' }
  if (status === 404 || status === 410) return { kind: 'gone', status }
  // 401: FCM's access token expired (the provider drops it and fetches a new one on the retry).
  if (status >= 500 || status === 429 || status === 408 || status === 401) {
    const after = retryAfterMs(retryAfter)
    return { kind: 'retry', why: `status ${status}`, ...(after !== undefined ? { retryAfterMs: after } : {}) }
  }
  return { kind: 'failed', why: `status ${status}` }
}

/** A thrown fetch/request error as a result: a timeout or a network error is worth a retry. */
export const resultOfError = (err: unknown): ProviderResult => ({ kind: 'retry', why: err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 200) : 'error' })

/** Every provider call is bounded in time: a slow provider never holds a send forever. */
export const PROVIDER_TIMEOUT_MS = 15_000

/**
 * The attempt's signal: the caller's (the node's core gives each attempt one that fires on the
 * timeout or when the node closes), else the provider timeout alone. Not `AbortSignal.any` over a
 * long-lived signal: every call would hang another dependent on it for the collector to find.
 */
export const attemptSignal = (signal?: AbortSignal): AbortSignal => signal ?? AbortSignal.timeout(PROVIDER_TIMEOUT_MS)
