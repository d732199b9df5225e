import type { FastifyPluginAsync } from 'fastify'
import { eventsModule } from '../../sync/modules/events/module.ts'
import { checkSubscribe } from '../../sync/modules/events/envelope.ts'
import { EVENTS } from '../../sync/core/events-limits.ts'
import { ProcessRegistry, publishedRecord } from '../../node/daemon/processes.ts'
import { typed } from '../http/type-provider.ts'
import { EventStream } from '../schemas/common.ts'
import { CancelBody, FinishBody, ProcessParams, ProgressBody, PublishBody, PublishResult, SubscribeQuery } from '../schemas/events.ts'
import { sseFrame } from '../sse.ts'
import { withRoutes, type ModuleRouteOptions } from './module.ts'

/**
 * chat.md "Event bus": publish, subscribe (SSE frames `ready`, `event`, `closed`), and the
 * process helper routes (progress, finish, cancel on a process id; paths of our design,
 * docs/api.md "Event bus"). Every rule is the bus's (sync/modules/events/).
 */
const eventsRoutes: FastifyPluginAsync<ModuleRouteOptions> = async (root, { engine }) => {
  const app = typed(root)
  const bus = () => engine.account().services.of(eventsModule)

  // Processes published on the bus show in `GET /v1/processes` beside the daemon's own work,
  // and the daemon's own long work is announced on the bus (device scope: it is this device's
  // work; the rule, past 3 s, is the registry's).
  const registry = (engine as { processes?: unknown }).processes
  if (registry instanceof ProcessRegistry) {
    const remove = registry.addSource(() => bus().processes.list().map(publishedRecord), { fromBus: true })
    const silence = registry.announceWith((e) => void bus().publish({ type: e.type, scope: 'device', target: e.target, data: e.data }))
    root.addHook('onClose', async () => {
      silence()
      remove()
    })
  }

  app.post('/v1/events', { schema: { summary: 'Publish an event (fire and forget)', body: PublishBody, response: { 200: PublishResult } } }, async (request) => {
    return { subscribers: bus().publish(request.body) }
  })

  app.get(
    '/v1/events/subscribe',
    { schema: { summary: 'Events matching the filter (SSE: ready, event, closed)', querystring: SubscribeQuery, response: { 200: EventStream('ready, event, closed') } } },
    async (request, reply) => {
      const filter = checkSubscribe(request.query)
      // Errors (space resolution, membership, pattern budget) answer before the stream opens.
      // Assigned once the subscription exists; events before then have no stream to go to.
      let stream: ReturnType<typeof root.sse.open> | undefined = undefined
      const sub = bus().subscribe(filter, (event, shared) => void stream?.sendFrame((shared.frame ??= sseFrame('event', event))))
      stream = root.sse.open(reply, { mailboxCapacity: EVENTS.subscriberBuffer })
      if (stream.closed) sub.close()
      else stream.onClose(() => sub.close())
    },
  )

  const P = '/v1/processes/:processId'
  app.post(
    `${P}/progress`,
    {
      schema: {
        summary: 'Report progress of a process this account published (process.progress with the full descriptor)',
        params: ProcessParams,
        body: ProgressBody,
        response: { 200: PublishResult },
      },
    },
    async (request) => {
      return { subscribers: bus().processProgress(request.params.processId, request.body) }
    },
  )
  app.post(
    `${P}/finish`,
    {
      schema: { summary: 'End a process this account published (process.done, .failed or .cancelled)', params: ProcessParams, body: FinishBody, response: { 200: PublishResult } },
    },
    async (request) => {
      return { subscribers: bus().processFinish(request.params.processId, request.body) }
    },
  )
  app.post(
    `${P}/cancel`,
    { schema: { summary: 'Ask the runner of a live process to cancel (process.cancel)', params: ProcessParams, body: CancelBody, response: { 200: PublishResult } } },
    async (request) => {
      return { subscribers: bus().processCancel(request.params.processId, request.body?.reason) }
    },
  )
}

/** The event bus served over HTTP, with the statuses of its codes (chat.md Errors). */
export const eventsServerModule = withRoutes(eventsModule, eventsRoutes, {
  'events.payload_too_large': 400,
  'events.no_read_key': 409,
  'events.too_many_patterns': 409,
  'events.topic_not_owned': 403,
  'process.not_found': 404,
  'process.ambiguous': 409,
})
