import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { NoContent } from '../schemas/common.ts'
import { Account, IdentityInfo, IdentityParams, NameFields } from '../schemas/spaces.ts'
import type { RouteHost } from './context.ts'
import { identityDirectory, identityInfo } from '../../sync/space/directory.ts'
import { typed } from '../http/type-provider.ts'

/** Spec "Account and identities" (the identities stream itself is in identities.ts). */
export function accountRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.get('/v1/account', { schema: { summary: 'Own account id and profile', response: { 200: Account } } }, async () => {
      const account = engine.account()
      return { accountId: account.accountId, ...(await account.profile()) }
    })

    app.put(
      '/v1/account/metadata',
      {
        schema: {
          summary: 'Set the profile: absent keeps, empty string clears; at least one field',
          body: NameFields,
          response: { 204: NoContent },
        },
      },
      async (request, reply) => {
        await engine.account().setProfile(request.body)
        return reply.code(204).send()
      },
    )

    app.get(
      '/v1/identities',
      { schema: { summary: 'Every identity encountered (no rights)', response: { 200: Type.Object({ identities: Type.Array(IdentityInfo) }) } } },
      async () => ({ identities: [...(await identityDirectory(engine.account())).values()] }),
    )

    app.get('/v1/identities/:identity', { schema: { summary: 'One identity of the directory', params: IdentityParams, response: { 200: IdentityInfo } } }, async (request) =>
      identityInfo(engine.account(), request.params.identity),
    )
  }
}
