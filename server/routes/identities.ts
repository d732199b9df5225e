import type { FastifyInstance } from 'fastify'
import type { SseHub } from '../sse.ts'
import { EventStream } from '../schemas/common.ts'
import type { IdentitiesFrame } from '../../sync/space/directory.ts'
import { typed } from '../http/type-provider.ts'

/** What feeds `identities` frames: set by the engine routes once an engine serves the app. */
export interface IdentitySource {
  watch(emit: (frame: IdentitiesFrame) => void): () => void
}

const sources = new WeakMap<SseHub, IdentitySource>()

/** Connects the directory of the engine serving this app (its hub) to `/v1/identities/subscribe`. */
export function setIdentitySource(hub: SseHub, source: IdentitySource): void {
  sources.set(hub, source)
}

/**
 * `/v1/identities/subscribe`: the identity directory's live stream. It opens (`ready`), keeps
 * alive and closes like every stream; once an engine serves the app it sends `identities`
 * frames `{added, updated, removed}` when the directory changes. Clients read the current
 * directory with `GET /v1/identities` (there is no snapshot frame).
 */
export function identityRoutes(hub: SseHub) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.get(
      '/v1/identities/subscribe',
      { schema: { summary: 'Identity directory changes (SSE)', response: { 200: EventStream('ready, identities, lagged, closed') } } },
      async (_request, reply) => {
        const stream = hub.open(reply)
        const source = sources.get(hub)
        if (!source || stream.closed) return
        const stop = source.watch((frame) => stream.send('identities', frame))
        stream.onClose(stop)
      },
    )
  }
}
