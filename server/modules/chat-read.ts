import type { FastifyPluginAsync } from 'fastify'
import { chatReadModule } from '../../sync/modules/chat/read-state/module.ts'
import { typed } from '../http/type-provider.ts'
import { spaceServices } from '../routes/context.ts'
import { ChatParams, MessageParams } from '../schemas/chat.ts'
import { NoContent } from '../schemas/common.ts'
import { withRoutes, type ModuleRouteOptions } from './module.ts'

const O = '/v1/spaces/:spaceId/objects/:objectId/chat'

/**
 * chat.md "Endpoints / Chat", the three read routes: 204, idempotent, forward-only, local (so
 * they work offline); the account's other devices learn of it when the tech space syncs. As the
 * message routes: a missing object is 404 `object.not_found`, one holding no chat 404
 * `dataset.not_found`, an unknown message 404 `chat.not_found` (its status is the chat module's).
 */
const chatReadRoutes: FastifyPluginAsync<ModuleRouteOptions> = async (root, { engine }) => {
  const app = typed(root)
  const svc = (spaceId: string) => spaceServices(engine, spaceId).of(chatReadModule)

  app.post(
    `${O}/read-all`,
    { schema: { summary: 'Mark every message of the chat read (this account, all its devices)', params: ChatParams, response: { 204: NoContent } } },
    async (request, reply) => {
      const { spaceId, objectId } = request.params
      await svc(spaceId).readAll(objectId)
      return reply.code(204).send()
    },
  )

  app.post(
    `${O}/messages/:msgId/read`,
    { schema: { summary: 'Mark this message and every held one above it read', params: MessageParams, response: { 204: NoContent } } },
    async (request, reply) => {
      const { spaceId, objectId, msgId } = request.params
      await svc(spaceId).read(objectId, msgId)
      return reply.code(204).send()
    },
  )

  app.post(
    `${O}/messages/:msgId/reactions-read`,
    { schema: { summary: "Clear unread reactions on this message (and read the messages in the reactions' causal past)", params: MessageParams, response: { 204: NoContent } } },
    async (request, reply) => {
      const { spaceId, objectId, msgId } = request.params
      await svc(spaceId).reactionsRead(objectId, msgId)
      return reply.code(204).send()
    },
  )
}

/** Chat read state served over HTTP: its own module, listed after chat (it reads chat's messages). */
export const chatReadServerModule = withRoutes(chatReadModule, chatReadRoutes)
