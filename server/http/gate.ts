import type { FastifyRequest } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'

export interface GateState {
  authorized(): boolean
  closing(): boolean
}

/**
 * onRequest hook after the security guard: 503 `server.unavailable` while shutting down, then
 * 401 `auth.required` on every non-public route until an account is booted. Unknown routes
 * fall through to the 404/405 handler.
 */
export function gate(state: GateState) {
  return async (request: FastifyRequest): Promise<void> => {
    if (state.closing()) throw new SvcError('server.unavailable', 'the server is shutting down')
    if (request.routeOptions.url === undefined || request.is404) return
    if (request.routeOptions.config.public === true) return
    if (!state.authorized()) throw new SvcError('auth.required', 'no account is booted; POST /v1/auth first')
  }
}
