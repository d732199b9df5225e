import type { FastifyPluginAsync } from 'fastify'
import { pushModule } from '../../sync/modules/push/module.ts'
import { typed } from '../http/type-provider.ts'
import { NoContent } from '../schemas/common.ts'
import { PushSubscriptions, PushTokenBody, PushTokenState } from '../schemas/push.ts'
import { withRoutes, type ModuleRouteOptions } from './module.ts'

/**
 * chat.md "Endpoints / Push": this device's token and the topics the reconcile loop holds at the
 * push node. Every route is 409 `push.disabled` while no push node is configured. None waits on
 * the node: a token change schedules a reconcile pass, a delete wins locally at once.
 */
const pushRoutes: FastifyPluginAsync<ModuleRouteOptions> = async (root, { engine }) => {
  const app = typed(root)
  const push = () => engine.account().services.of(pushModule)

  app.post('/v1/push/token', { schema: { summary: "Register this device's push token", body: PushTokenBody, response: { 204: NoContent } } }, async (request, reply) => {
    await push().setToken(request.body)
    return reply.code(204).send()
  })
  app.get('/v1/push/token', { schema: { summary: 'Whether this device registered a push token (local state)', response: { 200: PushTokenState } } }, async () => push().getToken())
  app.delete('/v1/push/token', { schema: { summary: "Forget this device's push token (local delete wins)", response: { 204: NoContent } } }, async (_request, reply) => {
    await push().deleteToken()
    return reply.code(204).send()
  })
  app.get('/v1/push/subscriptions', { schema: { summary: 'Topics this device holds at the push node, by space push key', response: { 200: PushSubscriptions } } }, async () => ({
    subscriptions: push().subscriptions(),
  }))
}

/** push.disabled (409) is a core code (server/errors.ts): the module adds none. */
export const pushServerModule = withRoutes(pushModule, pushRoutes)
