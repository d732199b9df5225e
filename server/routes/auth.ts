import type { FastifyInstance } from 'fastify'
import type { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { AuthBody, AuthResult, AuthStatus } from '../schemas/auth.ts'
import { ControlHeader, NoContent } from '../schemas/common.ts'
import { controlToken } from './control.ts'
import { typed } from '../http/type-provider.ts'

/** `/v1/auth`: the account lifecycle (rules live in node/daemon/account-lifecycle.ts). */
export function authRoutes(session: AccountLifecycle) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.get('/v1/auth', { config: { public: true }, schema: { summary: 'Authorization state and accounts on disk', response: { 200: AuthStatus } } }, async () => session.status())

    app.post(
      '/v1/auth',
      {
        config: { public: true },
        schema: {
          summary: 'Create ({}), restore ({mnemonic, index?}) or select ({accountId}) an account and boot it',
          headers: ControlHeader,
          body: AuthBody,
          response: { 200: AuthResult, 201: AuthResult },
        },
      },
      async (request, reply) => {
        const result = await session.authorize(request.body, controlToken(request))
        return reply.code(result.created ? 201 : 200).send(result)
      },
    )

    app.delete(
      '/v1/auth',
      {
        config: { public: true },
        schema: { summary: 'Sign out (managed only); the server stays up unauthorized', headers: ControlHeader, response: { 204: NoContent } },
      },
      async (request, reply) => {
        await session.deauthorize(controlToken(request))
        return reply.code(204).send()
      },
    )
  }
}
