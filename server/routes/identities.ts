import type { FastifyInstance } from 'fastify'
import type { SseHub } from '../sse.ts'
import { EventStream } from '../schemas/common.ts'
import type { IdentitiesFrame } from '../../sync/space/directory.ts'
import { typed } from '../http/type-provider.ts'
import { forwarder } from '../http/forwarder.ts'

/** What feeds `identities` frames: the directory of the engine serving the app (buildApp passes it). */
export interface IdentitySource {
  watch(emit: (frame: IdentitiesFrame) => void): () => void
}

/**
 * `/v1/identities/subscribe`: the identity directory's live stream. It opens (`ready`), keeps
 * alive and closes like every stream; once an engine serves the app it sends `identities`
 * frames `{added, updated, removed}` when the directory changes, through the 16-deep event
 * subscriber buffer (`lagged {total}` when frames were dropped: re-read the directory). Clients
 * read the current directory with `GET /v1/identities` (there is no snapshot frame).
 */
export function identityRoutes(hub: SseHub, source?: IdentitySource) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.get(
      '/v1/identities/subscribe',
      { schema: { summary: 'Identity directory changes (SSE)', response: { 200: EventStream('ready, identities, lagged, closed') } } },
      async (_request, reply) => {
        const stream = hub.open(reply)
        if (!source || stream.closed) return
        const stop = source.watch(forwarder(stream, 'identities'))
        stream.onClose(stop)
      },
    )
  }
}
