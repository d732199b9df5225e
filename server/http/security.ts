import type { FastifyReply, FastifyRequest } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'
import { APP_CSP, NOSNIFF, SANDBOX_CSP } from './content-policy.ts'

/**
 * Browser-facing guards (spec Authentication 1 and 7), run first on every request:
 * - `Host` must name a loopback address, so a DNS-rebound page cannot reach the socket
 *   (`checkHost`: one Host header, and an absolute-form target names loopback too);
 * - an `Origin` header must be on the allowlist, so a foreign page cannot drive the daemon with
 *   a no-preflight request; requests without `Origin` (curl, the SDKs) are unaffected;
 * - a document of the API's own origin may only load file content (`checkFetchSite`);
 * - CORS headers for allowlisted origins, and preflights answered here.
 */
export const ALLOWED_ORIGINS: ReadonlySet<string> = new Set([
  'http://localhost:5173',
  'http://127.0.0.1:5173',
  // The desktop shell's two webview origins (choice: Tauri's, on macOS/Linux and on Windows).
  'tauri://localhost',
  'http://tauri.localhost',
])

export const ALLOWED_REQUEST_HEADERS = 'Content-Type, Accept, Range'
export const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE'
const PREFLIGHT_MAX_AGE_S = '600'

const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i

export function isLoopbackHost(host: string | undefined): boolean {
  return host !== undefined && LOOPBACK_HOST.test(host)
}

/** How many Host headers the request carries (Node keeps only the first in `headers`). */
function hostHeaderCount(rawHeaders: string[]): number {
  let n = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === 'host') n++
  return n
}

/**
 * The Host rules, before anything else: exactly one Host header (a second one could name
 * another site to a proxy or cache that reads the last), HTTP/1.1 requires it (RFC 9112 3.2),
 * it names a loopback address, and an absolute-form target (`GET http://x/ HTTP/1.1`, which
 * takes precedence over Host) must name a loopback address too.
 */
function checkHost(request: FastifyRequest): void {
  const raw = request.raw
  const count = hostHeaderCount(raw.rawHeaders)
  if (count > 1) throw new SvcError('request.forbidden_host', 'the request carries more than one Host header')
  if (count === 0 && raw.httpVersion === '1.1') throw new SvcError('request.malformed', 'an HTTP/1.1 request needs a Host header')
  if (!isLoopbackHost(request.headers.host)) {
    throw new SvcError('request.forbidden_host', 'the Host header must name a loopback address')
  }
  const target = raw.url ?? '/'
  if (target.startsWith('/')) return
  let authority: string
  try {
    authority = new URL(target).host
  } catch {
    throw new SvcError('request.malformed', 'the request target is neither a path nor an absolute URL')
  }
  if (!isLoopbackHost(authority)) throw new SvcError('request.forbidden_host', 'the request target must name a loopback address')
}

/**
 * The only page this origin serves is the web app (app-static.ts: strict CSP, its own bundled
 * script). Every other document it serves is a file, under the sandbox CSP: an opaque origin
 * that runs no script, whose requests a browser never marks `same-origin`. So a request marked
 * `same-origin` comes from the app when it is a script's fetch (`Sec-Fetch-Dest: empty`, which
 * covers EventSource too). Any other same-origin request (a frame, an image or a navigation
 * started by a served document) may only load passive file content (a video fetching its own
 * ranges): if a browser ever let a file's document run, its loads still could not read the
 * space list, push keys or invite tokens. Clients outside a browser send no `Sec-Fetch-Site`
 * and are unaffected; pages on allowlisted origins send `same-site` or `cross-site` with their
 * `Origin`.
 */
function checkFetchSite(request: FastifyRequest): void {
  if (request.headers['sec-fetch-site'] !== 'same-origin') return
  if (request.headers['sec-fetch-dest'] === 'empty') return
  if (request.method === 'GET' && request.routeOptions.config?.passiveContent === true) return
  if (request.method === 'GET' && request.routeOptions.config?.webApp === true) return
  throw new SvcError('request.forbidden_origin', "documents served from the API's own origin may not call it")
}

/** onRequest hook. Returns the reply when it answered (a preflight), else undefined. */
export function guardRequest(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  // Set before anything answers, so streams, which write their own head, carry them too.
  passiveHeaders(request, reply)
  checkHost(request)
  checkFetchSite(request)
  const origin = request.headers.origin
  // The app's own requests (module scripts and POSTs carry Origin): the origin that served it,
  // named by the Host header already checked to be loopback, so no other site can claim it.
  if (origin === undefined || origin === `http://${request.headers.host}`) return undefined
  if (!ALLOWED_ORIGINS.has(origin)) throw new SvcError('request.forbidden_origin', 'this origin is not allowed')

  reply.header('Access-Control-Allow-Origin', origin)
  reply.header('Vary', 'Origin')
  if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
    return reply
      .code(204)
      .header('Access-Control-Allow-Methods', ALLOWED_METHODS)
      .header('Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS)
      .header('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_S)
      .send()
  }
  return undefined
}

/** No response of the API is ever sniffed into, or rendered as, active content (onRequest, and onSend for answers no hook saw). */
export function passiveHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Content-Type-Options', NOSNIFF)
  reply.header('Content-Security-Policy', request.routeOptions.config?.webApp === true ? APP_CSP : SANDBOX_CSP)
}
