import { errField, silentLogger, type Logger } from '../../../sync/core/log.ts'
import { signJwt } from './jwt.ts'
import { attemptSignal, PROVIDER_TIMEOUT_MS, resultOfError, resultOfStatus, type ProviderMessage, type ProviderResult, type PushProvider } from './provider.ts'

export interface FcmConfig {
  projectId: string
  /** The service account (its JSON key file's `client_email`, `private_key`, `token_uri`). */
  clientEmail: string
  privateKey: string
  tokenUri?: string
  /** FCM's base URL; default Google's. Tests point it at a fake on loopback. */
  endpoint?: string
}

const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging'

/**
 * FCM HTTP v1: a service-account OAuth token (a JWT signed RS256 with the account's key,
 * exchanged at `token_uri`, cached until a minute before it expires), then one POST per device
 * token to `projects/<id>/messages:send`. Data-only messages: the app decrypts and renders.
 */
export class FcmProvider implements PushProvider {
  readonly platform = 'android' as const
  private access: { token: string; until: number } | undefined
  private fetching: Promise<string> | undefined

  constructor(
    private readonly cfg: FcmConfig,
    private readonly now: () => number = Date.now,
    private readonly log: Logger = silentLogger,
  ) {}

  private async accessToken(): Promise<string> {
    if (this.access && this.access.until > this.now()) return this.access.token
    this.fetching ??= (async () => {
      try {
        const aud = this.cfg.tokenUri ?? 'https://oauth2.googleapis.com/token'
        const iat = Math.floor(this.now() / 1000)
        const assertion = signJwt('RS256', {}, { iss: this.cfg.clientEmail, scope: SCOPE, aud, iat, exp: iat + 3600 }, this.cfg.privateKey)
        const res = await fetch(aud, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
          signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
        })
        if (!res.ok) throw new Error(`token endpoint answered ${res.status}`)
        const body = (await res.json()) as { access_token?: string; expires_in?: number }
        if (typeof body.access_token !== 'string') throw new Error('token endpoint gave no access_token')
        this.access = { token: body.access_token, until: this.now() + Math.max(0, (body.expires_in ?? 3600) - 60) * 1000 }
        return body.access_token
      } finally {
        this.fetching = undefined
      }
    })()
    return this.fetching
  }

  async send(token: string, m: ProviderMessage, signal?: AbortSignal): Promise<ProviderResult> {
    try {
      const bearer = await this.accessToken()
      const data: Record<string, string> = { spaceKey: m.spaceKey, keyId: m.keyId, payload: m.payload, silent: String(m.silent) }
      if (m.groupId) data.groupId = m.groupId
      const message = { token, data, android: { priority: m.silent ? 'normal' : 'high', ...(m.groupId ? { collapse_key: m.groupId } : {}) } }
      const base = this.cfg.endpoint ?? 'https://fcm.googleapis.com'
      const res = await fetch(`${base}/v1/projects/${encodeURIComponent(this.cfg.projectId)}/messages:send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ message }),
        signal: attemptSignal(signal),
        redirect: 'manual',
      })
      if (res.status === 401) this.access = undefined
      // Read only to free the connection: the status is the result.
      await res.arrayBuffer().catch((err: unknown) => this.log.debug("reading FCM's answer failed", { status: res.status, err: errField(err) }))
      return resultOfStatus(res.status, res.headers.get('retry-after'))
    } catch (err) {
      // The token endpoint down, a timeout, a reset: all worth a retry.
      return resultOfError(err)
    }
  }
}
