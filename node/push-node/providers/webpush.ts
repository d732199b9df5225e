import webpush from 'web-push'
import { PROVIDER_TIMEOUT_MS, resultOfStatus, type ProviderMessage, type PushProvider } from './provider.ts'

export interface WebPushConfig {
  /** VAPID (RFC 8292): a contact (`mailto:` or https URL) and the node's P-256 key pair (base64url). */
  subject: string
  publicKey: string
  privateKey: string
  /** Plain http push services (tests on loopback); real ones are https. */
  allowHttp?: boolean
}

/**
 * Web Push (RFC 8030): the token is the browser's subscription JSON `{endpoint, keys: {p256dh,
 * auth}}`. The `web-push` library does the parts that are easy to get wrong, the RFC 8291
 * payload encryption (aes128gcm) and the VAPID JWT; the request itself goes out through fetch,
 * so the same code reaches a loopback fake in tests.
 */
export class WebPushProvider implements PushProvider {
  readonly platform = 'webpush' as const
  constructor(private readonly cfg: WebPushConfig) {}

  async send(token: string, m: ProviderMessage) {
    let sub: webpush.PushSubscription
    try {
      sub = JSON.parse(token) as webpush.PushSubscription
      const u = new URL(sub.endpoint)
      if (u.protocol !== 'https:' && !(this.cfg.allowHttp && u.protocol === 'http:')) return 'gone' as const
      if (typeof sub.keys?.p256dh !== 'string' || typeof sub.keys?.auth !== 'string') return 'gone' as const
    } catch {
      return 'gone' as const
    }
    try {
      const d = webpush.generateRequestDetails(sub, JSON.stringify(m), {
        vapidDetails: { subject: this.cfg.subject, publicKey: this.cfg.publicKey, privateKey: this.cfg.privateKey },
        TTL: 24 * 3600,
        urgency: m.silent ? 'low' : 'high',
        ...(m.groupId ? { topic: m.groupId.slice(0, 32) } : {}),
      })
      const res = await fetch(d.endpoint, { method: d.method, headers: d.headers as Record<string, string>, body: new Uint8Array(d.body) as Uint8Array<ArrayBuffer>, signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS), redirect: 'error' })
      await res.arrayBuffer().catch(() => undefined)
      return resultOfStatus(res.status)
    } catch {
      return 'failed' as const
    }
  }
}
