import { PROVIDER_TIMEOUT_MS, resultOfStatus, type ProviderMessage, type PushProvider } from './provider.ts'

export interface NtfyConfig {
  /**
   * Origins (scheme://host:port) a UnifiedPush endpoint may point at; empty: any https origin.
   * A subscriber names its endpoint, so without a list the node POSTs wherever a space-key
   * holder says (https only, unless `allowHttp`).
   */
  allowedOrigins?: string[]
  /** Plain http endpoints (a self-hoster's LAN ntfy, tests on loopback). */
  allowHttp?: boolean
}

/**
 * UnifiedPush / ntfy: the token is the subscriber's endpoint URL, and a push is an HTTP POST of
 * the message (JSON) to it. No Google or Apple in the loop; a self-hoster runs ntfy.
 */
export class NtfyProvider implements PushProvider {
  readonly platform = 'ntfy' as const
  constructor(private readonly cfg: NtfyConfig = {}) {}

  endpointOk(token: string): boolean {
    let u: URL
    try {
      u = new URL(token)
    } catch {
      return false
    }
    if (u.protocol !== 'https:' && !(this.cfg.allowHttp && u.protocol === 'http:')) return false
    return !this.cfg.allowedOrigins?.length || this.cfg.allowedOrigins.includes(u.origin)
  }

  async send(token: string, message: ProviderMessage) {
    if (!this.endpointOk(token)) return 'gone' as const
    try {
      const res = await fetch(token, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(message.silent ? { priority: '1' } : {}) },
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
        redirect: 'error',
      })
      await res.arrayBuffer().catch(() => undefined)
      return resultOfStatus(res.status)
    } catch {
      return 'failed' as const
    }
  }
}
