import type { FastifyInstance } from 'fastify'
import type { SseHub } from '../sse.ts'
import { EventStream } from '../schemas/common.ts'

/**
 * `/v1/identities/subscribe`: the identity directory's live stream. It opens (`ready`), keeps
 * alive and closes like every stream; `identities` frames need the engine's directory and are
 * not emitted yet.
 */
export function identityRoutes(hub: SseHub) {
  return async (app: FastifyInstance) => {
    app.get(
      '/v1/identities/subscribe',
      { schema: { summary: 'Identity directory changes (SSE)', response: { 200: EventStream('ready, identities, lagged, closed') } } },
      async (_request, reply) => {
        hub.open(reply)
      },
    )
  }
}
