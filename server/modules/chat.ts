import type { FastifyPluginAsync } from 'fastify'
import { chatModule } from '../../sync/modules/chat/module.ts'
import { typed } from '../http/type-provider.ts'
import { spaceServices } from '../routes/context.ts'
import { ChatParams, EditBody, MessageParams, ReactionParams, SendBody } from '../schemas/chat.ts'
import { WriteResult } from '../schemas/query.ts'
import { withRoutes, type ModuleRouteOptions } from './module.ts'

const O = '/v1/spaces/:spaceId/objects/:objectId/chat'

/**
 * chat.md "Endpoints / Chat": the message write routes (the rules are ChatMessages', the
 * authorship rule also the dataset's merge rule). Reading is the data plane. A route on an
 * object that holds no chat answers 404 `dataset.not_found` (docs/chat.md "Messages").
 */
const chatRoutes: FastifyPluginAsync<ModuleRouteOptions> = async (root, { engine }) => {
  const app = typed(root)
  const chat = (spaceId: string) => spaceServices(engine, spaceId).of(chatModule)

  app.post(
    `${O}/messages`,
    { schema: { summary: 'Send a message (recordIds[0] is its id)', params: ChatParams, body: SendBody, response: { 201: WriteResult } } },
    async (request, reply) => {
      const { spaceId, objectId } = request.params
      return reply.code(201).send(await chat(spaceId).send(objectId, request.body))
    },
  )

  app.patch(
    `${O}/messages/:msgId`,
    { schema: { summary: "Edit the text of one's own message", params: MessageParams, body: EditBody, response: { 200: WriteResult } } },
    async (request) => {
      const { spaceId, objectId, msgId } = request.params
      return await chat(spaceId).edit(objectId, msgId, request.body)
    },
  )

  app.delete(`${O}/messages/:msgId`, { schema: { summary: "Delete one's own message", params: MessageParams, response: { 200: WriteResult } } }, async (request) => {
    const { spaceId, objectId, msgId } = request.params
    return await chat(spaceId).remove(objectId, msgId)
  })

  app.post(
    `${O}/messages/:msgId/reactions/:emoji`,
    { schema: { summary: "Toggle the caller's reaction", params: ReactionParams, response: { 200: WriteResult } } },
    async (request) => {
      const { spaceId, objectId, msgId, emoji } = request.params
      return await chat(spaceId).toggleReaction(objectId, msgId, emoji)
    },
  )
}

/** Chat served over HTTP: its write routes and the statuses of its codes (chat.md Errors). */
export const chatServerModule = withRoutes(chatModule, chatRoutes, {
  'chat.text_required': 400,
  'chat.agent_invalid': 400,
  'chat.not_author': 403,
  'chat.not_found': 404,
})
