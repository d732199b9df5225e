import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { ErrorCode } from '../../sync/core/errors.ts'
import { errorBody } from '../errors.ts'
import { NOSNIFF, SANDBOX_CSP } from './content-policy.ts'

/**
 * Errors Node's HTTP parser raises before a request exists (so before Fastify sees it): a
 * malformed request line, Content-Length together with chunked encoding, a header section over
 * the limit, headers that never finish. Node answers them with a bare status line and Fastify's
 * default with its own body shape; this answers with the spec's envelope, then closes the
 * connection (the parser cannot resynchronise on a broken stream).
 */
const BY_NODE_CODE: Record<string, [status: 400 | 408 | 431, code: ErrorCode, message: string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request.timeout', 'the request headers did not arrive in time'],
  HPE_HEADER_OVERFLOW: [431, 'request.headers_too_large', 'the request headers are over the size limit'],
  // Node reports Content-Length sent together with Transfer-Encoding under either code.
  HPE_UNEXPECTED_CONTENT_LENGTH: [400, 'request.malformed', 'a request may not carry both Content-Length and Transfer-Encoding'],
  HPE_INVALID_TRANSFER_ENCODING: [400, 'request.malformed', 'the Transfer-Encoding header is not valid, or comes with a Content-Length'],
  HPE_INVALID_CONTENT_LENGTH: [400, 'request.malformed', 'the Content-Length header is not valid'],
  HPE_INVALID_METHOD: [400, 'request.malformed', 'the request line names no valid method'],
  HPE_INVALID_URL: [400, 'request.malformed', 'the request line holds no valid target'],
  HPE_INVALID_VERSION: [400, 'request.malformed', 'the request line holds no valid HTTP version'],
}

const FALLBACK: [400, ErrorCode, string] = [400, 'request.malformed', 'the request is not well-formed HTTP']

/** The raw HTTP/1.1 response for a client error: the envelope, and the connection closes. */
export function clientErrorResponse(err: { code?: string }): string {
  const [status, code, message] = (err.code !== undefined ? BY_NODE_CODE[err.code] : undefined) ?? FALLBACK
  const body = JSON.stringify(errorBody(code, message))
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `X-Content-Type-Options: ${NOSNIFF}\r\n` +
    `Content-Security-Policy: ${SANDBOX_CSP}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  )
}

/** Fastify's `clientErrorHandler` (the http server's `clientError` event). */
export function clientErrorHandler(err: Error & { code?: string }, socket: Duplex): void {
  // A reset connection has no one left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  // A response already under way on this socket (`_httpMessage`, as Node's own handler checks)
  // cannot be followed by another one.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy()
    return
  }
  socket.end(clientErrorResponse(err))
}
