import { connect, constants, type ClientHttp2Session } from 'node:http2'
import { createPrivateKey, type KeyObject } from 'node:crypto'
import { signJwt } from './jwt.ts'
import { PROVIDER_TIMEOUT_MS, resultOfError, resultOfStatus, type ProviderMessage, type ProviderResult, type PushProvider } from './provider.ts'

export interface ApnsConfig {
  /** Token auth: the team id, the key id and the .p8 (PKCS#8 P-256) key Apple issued. */
  teamId: string
  keyId: string
  privateKey: string
  /** The app's bundle id (`apns-topic`). */
  bundleId: string
  /** Default Apple's production host. Tests point it at a local `node:http2` fake. */
  endpoint?: string
  /** Extra TLS options for the session (a test's self-signed CA). */
  ca?: string
}

/** Apple asks providers to reuse one provider token for 20 to 60 minutes. */
const TOKEN_TTL_MS = 40 * 60_000

/**
 * APNs over HTTP/2 with token auth: an ES256 JWT (`kid` = key id, `iss` = team id), refreshed
 * every 40 minutes, over one long-lived session per node. Loud payloads are `mutable-content`
 * alerts the app's notification service extension decrypts; silent ones are background pushes.
 */
export class ApnsProvider implements PushProvider {
  readonly platform = 'ios' as const
  private session: ClientHttp2Session | undefined
  private jwt: { token: string; at: number } | undefined
  private readonly key: KeyObject

  constructor(
    private readonly cfg: ApnsConfig,
    private readonly now: () => number = Date.now,
  ) {
    this.key = createPrivateKey(cfg.privateKey)
  }

  private bearer(): string {
    if (!this.jwt || this.now() - this.jwt.at > TOKEN_TTL_MS) {
      this.jwt = { token: signJwt('ES256', { kid: this.cfg.keyId }, { iss: this.cfg.teamId, iat: Math.floor(this.now() / 1000) }, this.key), at: this.now() }
    }
    return this.jwt.token
  }

  private sessionOf(): ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session
    const s = connect(this.cfg.endpoint ?? 'https://api.push.apple.com', this.cfg.ca ? { ca: this.cfg.ca } : {})
    // A session error fails its requests (each one retries); the next send opens a new session.
    s.on('error', () => s.destroy())
    s.on('close', () => this.session === s && (this.session = undefined))
    s.unref()
    return (this.session = s)
  }

  send(token: string, m: ProviderMessage, signal?: AbortSignal): Promise<ProviderResult> {
    if (!/^[0-9a-fA-F]{16,200}$/.test(token)) return Promise.resolve({ kind: 'refused', why: 'not an APNs device token' })
    const body = JSON.stringify({
      aps: m.silent ? { 'content-available': 1 } : { alert: { title: 'New message' }, 'mutable-content': 1, ...(m.groupId ? { 'thread-id': m.groupId } : {}) },
      spaceKey: m.spaceKey,
      keyId: m.keyId,
      payload: m.payload,
    })
    return new Promise((resolve) => {
      let req
      try {
        req = this.sessionOf().request({
          [constants.HTTP2_HEADER_METHOD]: 'POST',
          [constants.HTTP2_HEADER_PATH]: `/3/device/${token}`,
          authorization: `bearer ${this.bearer()}`,
          'apns-topic': this.cfg.bundleId,
          'apns-push-type': m.silent ? 'background' : 'alert',
          'apns-priority': m.silent ? '5' : '10',
          ...(m.groupId ? { 'apns-collapse-id': m.groupId.slice(0, 64) } : {}),
        })
      } catch (err) {
        resolve(resultOfError(err))
        return
      }
      const cancel = (why: string) => {
        req.close(constants.NGHTTP2_CANCEL)
        resolve({ kind: 'retry', why })
      }
      const timer = setTimeout(() => cancel('timeout'), PROVIDER_TIMEOUT_MS)
      const onAbort = () => cancel('node closing')
      signal?.addEventListener('abort', onAbort, { once: true })
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
      }
      req.on('response', (h) => {
        done()
        resolve(resultOfStatus(Number(h[constants.HTTP2_HEADER_STATUS]), h['retry-after']))
        req.resume()
      })
      req.on('error', (err) => {
        done()
        resolve(resultOfError(err))
      })
      req.end(body)
    })
  }

  close() {
    this.session?.close()
  }
}
