import { errField, silentLogger, type Logger } from '../../../sync/core/log.ts'
import { attemptSignal, resultOfError, resultOfStatus, type ProviderMessage, type ProviderResult, type PushProvider } from './provider.ts'

export interface NtfyConfig {
  /**
   * The operator's ntfy server (its URL). Its origin is where endpoints may point unless
   * `allowedOrigins` says otherwise.
   */
  server?: string
  /**
   * Origins (scheme://host:port) a UnifiedPush endpoint may point at; default the `server`'s
   * origin. A subscriber names its endpoint, and anyone can mint a space key to subscribe, so
   * without a list the node would POST wherever a stranger says: with neither a list nor a
   * server, no endpoint is allowed.
   */
  allowedOrigins?: string[]
  /** Plain http endpoints (a self-hoster's LAN ntfy, tests on loopback). */
  allowHttp?: boolean
}

/**
 * UnifiedPush / ntfy: the token is the subscriber's endpoint URL, and a push is an HTTP POST of
 * the message (JSON) to it. No Google or Apple in the loop; a self-hoster runs ntfy. Only the
 * operator's allowlisted origins are reached (they may be private: the operator chose them),
 * never by a redirect.
 */
export class NtfyProvider implements PushProvider {
  readonly platform = 'ntfy' as const
  private readonly origins: ReadonlySet<string>

  constructor(
    private readonly cfg: NtfyConfig = {},
    private readonly log: Logger = silentLogger,
  ) {
    const listed = cfg.allowedOrigins ?? (cfg.server ? [cfg.server] : [])
    // Normalised through URL: `https://Host:443/` and `https://host` are one origin.
    this.origins = new Set(
      listed.flatMap((o) => {
        try {
          return [new URL(o).origin]
        } catch {
          return []
        }
      }),
    )
  }

  endpointOk(token: string): boolean {
    let u: URL
    try {
      u = new URL(token)
    } catch {
      return false
    }
    if (u.protocol !== 'https:' && !(this.cfg.allowHttp && u.protocol === 'http:')) return false
    if (u.username || u.password) return false
    return this.origins.has(u.origin)
  }

  async send(token: string, message: ProviderMessage, signal?: AbortSignal): Promise<ProviderResult> {
    if (!this.endpointOk(token)) return { kind: 'refused', why: 'ntfy endpoint outside the allowed origins' }
    try {
      const res = await fetch(token, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(message.silent ? { priority: '1' } : {}) },
        body: JSON.stringify(message),
        signal: attemptSignal(signal),
        redirect: 'manual',
      })
      // Read only to free the connection: the status is the result.
      await res.arrayBuffer().catch((err: unknown) => this.log.debug("reading ntfy's answer failed", { status: res.status, err: errField(err) }))
      return resultOfStatus(res.status, res.headers.get('retry-after'))
    } catch (err) {
      return resultOfError(err)
    }
  }
}
