import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import webpush from 'web-push'
import { checkedAddress, EndpointRefused, pinnedLookup, systemResolve, type Resolve } from '../endpoints.ts'
import { attemptSignal, resultOfError, resultOfStatus, type ProviderMessage, type ProviderResult, type PushProvider } from './provider.ts'

export interface WebPushConfig {
  /** VAPID (RFC 8292): a contact (`mailto:` or https URL) and the node's P-256 key pair (base64url). */
  subject: string
  publicKey: string
  privateKey: string
  /** Plain http push services (tests on loopback); real ones are https. */
  allowHttp?: boolean
  /**
   * Tests only: endpoints whose host resolves to a loopback or private address are allowed
   * (the fakes listen on loopback). Off, a subscriber can never aim the node at its own network.
   */
  allowPrivateEndpoints?: boolean
  /** Tests only: name resolution (default the system's), so a name can point at a fake. */
  resolve?: Resolve
}

/** Bytes of a push service's answer read at most (its body is never used). */
const MAX_ANSWER_BYTES = 16 * 1024

/**
 * Web Push (RFC 8030): the token is the browser's subscription JSON `{endpoint, keys: {p256dh,
 * auth}}`. The `web-push` library does the parts that are easy to get wrong, the RFC 8291
 * payload encryption (aes128gcm) and the VAPID JWT. The subscriber names the endpoint, so the
 * request goes out through `node:http(s)` with the endpoint's host resolved once, every address
 * checked public, and the socket pinned to the checked address (a lookup hook: no second
 * resolution, so no DNS rebinding); redirects are never followed.
 */
export class WebPushProvider implements PushProvider {
  readonly platform = 'webpush' as const
  private readonly resolve: Resolve
  constructor(private readonly cfg: WebPushConfig) {
    this.resolve = cfg.resolve ?? systemResolve
  }

  async send(token: string, m: ProviderMessage, signal?: AbortSignal): Promise<ProviderResult> {
    let sub: webpush.PushSubscription
    let url: URL
    try {
      sub = JSON.parse(token) as webpush.PushSubscription
      url = new URL(sub.endpoint)
    } catch {
      return { kind: 'refused', why: 'not a push subscription' }
    }
    if (url.protocol !== 'https:' && !(this.cfg.allowHttp && url.protocol === 'http:')) return { kind: 'refused', why: 'endpoint is not https' }
    if (url.username || url.password) return { kind: 'refused', why: 'endpoint carries credentials' }
    if (typeof sub.keys?.p256dh !== 'string' || typeof sub.keys?.auth !== 'string') return { kind: 'refused', why: 'subscription keys missing' }
    let d: ReturnType<typeof webpush.generateRequestDetails>
    try {
      d = webpush.generateRequestDetails(sub, JSON.stringify(m), {
        vapidDetails: { subject: this.cfg.subject, publicKey: this.cfg.publicKey, privateKey: this.cfg.privateKey },
        TTL: 24 * 3600,
        urgency: m.silent ? 'low' : 'high',
        ...(m.groupId ? { topic: m.groupId.slice(0, 32) } : {}),
      })
    } catch (err) {
      // Keys the library cannot use (a bad p256dh point): this subscription never works.
      return { kind: 'refused', why: `subscription unusable: ${(err as Error).message}`.slice(0, 200) }
    }
    try {
      const pinned = await checkedAddress(url.hostname, this.resolve, this.cfg.allowPrivateEndpoints === true)
      return await this.post(url, pinned, d, signal)
    } catch (err) {
      if (err instanceof EndpointRefused) return { kind: 'refused', why: err.message }
      return resultOfError(err)
    }
  }

  private post(url: URL, pinned: { address: string; family: number }, d: ReturnType<typeof webpush.generateRequestDetails>, signal?: AbortSignal): Promise<ProviderResult> {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest
    const body = d.body ?? Buffer.alloc(0)
    return new Promise((resolve, reject) => {
      const req = request(url, {
        method: d.method,
        headers: { ...(d.headers as Record<string, string>), 'content-length': String(body.length) },
        lookup: pinnedLookup(pinned),
        // A socket of its own: a pooled one may have been opened to another answer of this name.
        agent: false,
        signal: attemptSignal(signal),
      })
      req.once('response', (res) => {
        // 3xx is an answer like any other: nothing follows a Location header here.
        let read = 0
        res.on('data', (c: Buffer) => {
          read += c.length
          if (read > MAX_ANSWER_BYTES) res.destroy()
        })
        res.once('end', () => resolve(resultOfStatus(res.statusCode ?? 0, res.headers['retry-after'])))
        res.once('close', () => resolve(resultOfStatus(res.statusCode ?? 0, res.headers['retry-after'])))
      })
      req.once('error', reject)
      req.end(body)
    })
  }
}
