import type { FastifyReply, FastifyRequest } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'

/**
 * Browser-facing guards (spec Authentication 1 and 7), run first on every request:
 * - `Host` must name a loopback address, so a DNS-rebound page cannot reach the socket;
 * - an `Origin` header must be on the allowlist, so a foreign page cannot drive the daemon with
 *   a no-preflight request; requests without `Origin` (curl, the SDKs) are unaffected;
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

/** onRequest hook. Returns the reply when it answered (a preflight), else undefined. */
export function guardRequest(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (!isLoopbackHost(request.headers.host)) {
    throw new SvcError('request.forbidden_host', 'the Host header must name a loopback address')
  }
  const origin = request.headers.origin
  if (origin === undefined) return undefined
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
