import type { FastifyReply, FastifyRequest } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'

/**
 * Choice (docs/api.md "HTTP edges"): a request body must arrive in full within 10 s of its
 * headers. Without it a client that announces `Content-Length: 100` and sends 2 bytes holds a
 * connection and a parser for as long as Node's 5-minute request timeout.
 */
export const BODY_TIMEOUT_MS = 10_000

/**
 * onRequest hook: arms a timer for requests that carry a body. When it fires while Fastify is
 * still reading the body, the read fails with 408 `request.timeout` through Fastify's own body
 * error path (one answer, the envelope) and the connection closes. A route that reads its own
 * body stream (an upload, `config.streamedBody`) is exempt: it bounds its body itself.
 */
export function bodyTimeout(timeoutMs: number) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const raw = request.raw
    if (request.routeOptions.config.streamedBody === true || raw.complete) return
    const length = raw.headers['content-length']
    if (raw.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return

    const timer = setTimeout(() => {
      // Only while the body parser still listens: else the body was read, or nobody reads it
      // and Node discards it once the answer is sent.
      if (raw.complete || reply.sent || raw.listenerCount('data') === 0 || raw.listenerCount('error') === 0) return
      reply.header('connection', 'close')
      raw.emit('error', new SvcError('request.timeout', `the request body did not arrive within ${timeoutMs / 1000} s`))
    }, timeoutMs)
    const clear = () => clearTimeout(timer)
    raw.once('end', clear)
    raw.once('close', clear)
    reply.raw.once('close', clear)
  }
}
