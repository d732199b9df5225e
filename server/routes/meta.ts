import type { FastifyInstance } from 'fastify'
import type { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { ControlHeader, instant, NoContent } from '../schemas/common.ts'
import { Health } from '../schemas/auth.ts'
import { controlToken } from './control.ts'
import { typed } from '../http/type-provider.ts'

export interface MetaDeps {
  session: AccountLifecycle
  version: string
  startedAt: Date
  /** Called once the 204 of `POST /v1/shutdown` is on the wire. */
  requestShutdown: () => void
}

/** `/v1/health`, `/v1/shutdown`, `/v1/openapi.json`: all reachable before an account is booted. */
export function metaRoutes(deps: MetaDeps) {
  const { session } = deps
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.get('/v1/health', { config: { public: true }, schema: { summary: 'Liveness, version, booted account', response: { 200: Health } } }, async () => ({
      status: 'ok' as const,
      version: deps.version,
      startedAt: instant(deps.startedAt),
      account: session.accountId ?? '',
      bootstrapping: session.bootstrapping(),
      crdtVersion: session.crdtVersion(),
    }))

    app.post(
      '/v1/shutdown',
      {
        config: { public: true },
        schema: { summary: 'Stop a managed server (drains streams up to 10 s)', headers: ControlHeader, response: { 204: NoContent } },
      },
      async (request, reply) => {
        session.checkShutdown(controlToken(request))
        reply.raw.once('finish', () => setImmediate(deps.requestShutdown))
        return reply.code(204).send()
      },
    )

    app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger())
  }
}
