import type { FastifyRequest } from 'fastify'

export const CONTROL_HEADER = 'x-svc-control-token'

/** The `X-Svc-Control-Token` header, when sent exactly once. */
export function controlToken(request: FastifyRequest): string | undefined {
  const v = request.headers[CONTROL_HEADER]
  return typeof v === 'string' ? v : undefined
}
