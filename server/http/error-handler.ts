import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type ErrorCode, isSvcError, SvcError } from '../../sync/core/errors.ts'
import { errorBody, type ErrorStatuses } from '../errors.ts'
import { validationError } from './validation.ts'

/** Fastify's own request errors, mapped to the spec's codes (others become `internal`). */
const FRAMEWORK_ERRORS: Record<string, [code: ErrorCode, message: string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['request.bad_json', 'the request body is not valid JSON'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['request.bad_json', 'the request body is empty'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['request.bad_json', 'the request body does not match its Content-Length'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['request.too_large', 'the request body is over the 1 MB limit'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['request.unsupported_media_type', 'request bodies must be application/json'],
  FST_ERR_BAD_URL: ['request.invalid_field', 'the URL is not correctly encoded'],
  FST_ERR_MAX_PARAM_LENGTH: ['request.invalid_field', 'a path segment is too long'],
}

/** Turns anything thrown into a spec error: SvcError as is, framework errors mapped, the rest `internal`. */
export function toSvcError(err: unknown, request: FastifyRequest, statuses: ErrorStatuses): SvcError {
  if (isSvcError(err)) {
    // The union makes this unreachable from typed code; a cast or a foreign object still lands here.
    if (statuses.has(err.code)) return err
    request.log.error({ code: err.code }, 'error code no served module declares')
    return new SvcError('internal', 'internal error')
  }
  const fe = err as FastifyError
  if (Array.isArray(fe?.validation)) return validationError(fe.validation, fe.validationContext, request)
  const mapped = typeof fe?.code === 'string' ? FRAMEWORK_ERRORS[fe.code] : undefined
  if (mapped) {
    const [code, message] = mapped
    return code === 'request.invalid_field' ? new SvcError(code, message, { field: 'path' }) : new SvcError(code, message)
  }
  request.log.error({ err }, 'unhandled error')
  return new SvcError('internal', 'internal error')
}

export function sendError(reply: FastifyReply, err: SvcError, statuses: ErrorStatuses): FastifyReply {
  const status = statuses.has(err.code) ? statuses.statusOf(err.code) : 500
  return reply
    .code(status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(errorBody(err.code, err.message, err.details))
}

/** Patterns of registered routes, to tell 405 (path known, method not) from 404. */
class RouteTable {
  private readonly routes: Array<{ re: RegExp; methods: Set<string> }> = []
  private readonly byUrl = new Map<string, Set<string>>()

  add(url: string, methods: string | string[]): void {
    let set = this.byUrl.get(url)
    if (!set) {
      set = new Set()
      this.byUrl.set(url, set)
      const pattern = url
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')
      this.routes.push({ re: new RegExp(`^${pattern}$`), methods: set })
    }
    for (const m of Array.isArray(methods) ? methods : [methods]) set.add(m.toUpperCase())
  }

  methodsFor(path: string): string[] {
    const out = new Set<string>()
    for (const r of this.routes) if (r.re.test(path)) for (const m of r.methods) out.add(m)
    return [...out].sort()
  }
}

/** Installs the error handler and the 404/405 handler on the root instance. */
export function installErrorHandling(app: FastifyInstance, statuses: ErrorStatuses): void {
  const table = new RouteTable()
  app.addHook('onRoute', (route) => table.add(route.url, route.method))

  app.setErrorHandler((err, request, reply) => sendError(reply, toSvcError(err, request, statuses), statuses))

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url
    const allowed = table.methodsFor(path)
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '))
      return sendError(reply, new SvcError('request.method_not_allowed', `${request.method} is not allowed here; allowed: ${allowed.join(', ')}`), statuses)
    }
    return sendError(reply, new SvcError('request.not_found', 'no such route'), statuses)
  })
}
