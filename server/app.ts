import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { AccountLifecycle } from '../node/daemon/account-lifecycle.ts'
import { installBodyParsing } from './http/body.ts'
import { BODY_TIMEOUT_MS, bodyTimeout } from './http/body-timeout.ts'
import { clientErrorHandler } from './http/client-errors.ts'
import { installErrorHandling, sendError, toSvcError } from './http/error-handler.ts'
import { ErrorStatuses } from './errors.ts'
import { gate } from './http/gate.ts'
import { installOpenApi } from './http/openapi.ts'
import './http/route-config.ts'
import { installReadOnly } from './http/read-only.ts'
import { guardRequest, passiveHeaders } from './http/security.ts'
import { AJV_OPTIONS, coerceQuery, dropUnknownKeys } from './http/validation.ts'
import { watchDirectory } from '../sync/space/directory.ts'
import { SERVER_MODULES, type AnyServerModule } from './modules/index.ts'
import { authRoutes } from './routes/auth.ts'
import { webAppRoutes } from './http/app-static.ts'
import type { RouteHost } from './routes/context.ts'
import { engineRoutes } from './routes/engine.ts'
import { identityRoutes } from './routes/identities.ts'
import { LiveShares } from './routes/live-share.ts'
import { metaRoutes } from './routes/meta.ts'
import { DEFAULT_CLOSE_GRACE_MS, DEFAULT_KEEPALIVE_MS, DEFAULT_MAILBOX, SseHub, type SseSettings } from './sse.ts'
import { VERSION } from './version.ts'
import { MAX_REQUEST_BODY_BYTES } from '../sync/core/limits.ts'

/** Spec Limits: request body 1 MB. */
export const BODY_LIMIT = MAX_REQUEST_BODY_BYTES

/** Choice (docs/api.md "HTTP edges"): the header section must arrive within 10 s. */
export const HEADERS_TIMEOUT_MS = 10_000

export interface AppOptions {
  /** The account lifecycle; the app tears it down when it closes. */
  session: AccountLifecycle
  version?: string
  startedAt?: Date
  sse?: Partial<SseSettings>
  /**
   * What `POST /v1/shutdown` triggers once its 204 is sent. `svc serve` stops the process;
   * the default closes the app (drain, teardown).
   */
  requestShutdown?: () => void
  logger?: FastifyServerOptions['logger']
  /**
   * The daemon's pino root (node/log/pino-logger.ts), used instead of `logger` so HTTP lines and
   * component lines share one stream and level; `requestLogs` adds a line per request and answer.
   */
  loggerInstance?: FastifyBaseLogger
  requestLogs?: boolean
  /**
   * The engine the routes serve (the DaemonHost the session boots). Without it the app
   * serves only the platform routes (health, auth, control, the identities stream).
   */
  engine?: RouteHost
  /**
   * The modules whose routes the app serves, once `engine` is given: the same list the
   * engine's account runs (default SERVER_MODULES, the release's).
   */
  modules?: readonly AnyServerModule[]
  /** How long a request body may take to arrive (default BODY_TIMEOUT_MS; tests shorten it). */
  bodyTimeoutMs?: number
  /** How long the request headers may take (default HEADERS_TIMEOUT_MS; tests shorten it). */
  headersTimeoutMs?: number
  /** More route plugins, added after the engine's and the modules'. */
  routes?: Array<(app: FastifyInstance) => Promise<void>>
  /** Where the built web app is (default dist/app); false serves none. */
  webApp?: { dir?: string } | false
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Open SSE streams; closed on shutdown (`server_shutdown`) and teardown (`deauthorized`). */
    sse: SseHub
  }
}

/** Builds the HTTP app without listening (tests use `app.inject`). */
export function buildApp(opts: AppOptions): FastifyInstance {
  const { session } = opts
  const modules = opts.modules ?? SERVER_MODULES
  const statuses = new ErrorStatuses(modules)
  const headersTimeoutMs = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS
  const app = Fastify({
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- Fastify 5 deprecates disableRequestLogging's boolean for a function form; the boolean still works and says what we mean
    ...(opts.loggerInstance ? { loggerInstance: opts.loggerInstance, disableRequestLogging: !opts.requestLogs } : { logger: opts.logger ?? false }),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: false,
    exposeHeadRoutes: false,
    ajv: { customOptions: AJV_OPTIONS },
    // Malformed URLs never reach a route: answer them with the envelope too.
    frameworkErrors: (err, request, reply) => {
      // No hook runs for these answers.
      passiveHeaders(request, reply)
      void sendError(reply, toSvcError(err, request, statuses), statuses)
    },
    // Errors of the HTTP parser, before any request exists: the envelope as well.
    clientErrorHandler,
    http: {
      // The Host rules (one header, loopback, required on HTTP/1.1) live in one place
      // (server/http/security.ts), which answers with the envelope; Node's own check would
      // answer a bare 400 first.
      requireHostHeader: false,
      headersTimeout: headersTimeoutMs,
      // Node checks the headers timeout on this interval; the default 30 s would let a slow
      // client hold a connection for up to 40 s instead of 10.
      connectionsCheckingInterval: Math.max(100, Math.min(1000, headersTimeoutMs / 4)),
    },
  })

  let closing = false
  const hub = new SseHub(
    {
      keepaliveMs: opts.sse?.keepaliveMs ?? DEFAULT_KEEPALIVE_MS,
      mailboxCapacity: opts.sse?.mailboxCapacity ?? DEFAULT_MAILBOX,
      closeGraceMs: opts.sse?.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS,
    },
    (request) => {
      if (closing) return 'server_shutdown'
      return session.authorized || request.routeOptions.config.public === true ? undefined : 'deauthorized'
    },
  )
  app.decorate('sse', hub)
  app.decorate('liveShares', new LiveShares())

  installBodyParsing(app)

  installErrorHandling(app, statuses)
  installOpenApi(app, opts.version ?? VERSION)

  app.addHook('onRequest', async (request, reply) => guardRequest(request, reply))
  app.addHook('onRequest', gate({ authorized: () => session.authorized, closing: () => closing }))
  installReadOnly(app, session)
  app.addHook('onRequest', bodyTimeout(opts.bodyTimeoutMs ?? BODY_TIMEOUT_MS))
  app.addHook('preValidation', async (request) => {
    coerceQuery(request)
    if (request.routeOptions.config.unknownKeys === 'drop') dropUnknownKeys(request)
  })

  // While draining, answers close their connection so the server can finish closing.
  app.addHook('onSend', async (request, reply) => {
    passiveHeaders(request, reply)
    if (closing) reply.header('connection', 'close')
  })

  session.onTeardown((reason) => hub.closeAll(reason))
  app.addHook('preClose', async () => {
    closing = true
    hub.closeAll('server_shutdown')
  })
  app.addHook('onClose', async () => {
    await session.close()
  })

  app.register(
    metaRoutes({
      session,
      version: opts.version ?? VERSION,
      startedAt: opts.startedAt ?? new Date(),
      requestShutdown: opts.requestShutdown ?? (() => void app.close()),
    }),
  )
  app.register(authRoutes(session))
  if (opts.webApp !== false) app.register(webAppRoutes(opts.webApp))
  const { engine } = opts
  if (engine) {
    // A restart serves before any space opens (AccountEngineDeps.spacesInBackground): a route of
    // a space opens it, or waits for its rows when it is opening.
    // The space may be named in the path, the query (events, agents) or the body (usecase
    // setup); a route naming none may read any space (lists, agents), so it waits for all.
    const pinned = new WeakMap<object, () => void>()
    app.addHook('onResponse', async (request) => pinned.get(request)?.())
    app.addHook('preHandler', async (request, reply) => {
      const config = request.routeOptions.config
      if (config.public === true || !session.authorized) return
      const named = [request.params, request.query, request.body].flatMap((part) => {
        const v = part && typeof part === 'object' ? (part as { spaceId?: unknown }).spaceId : undefined
        return (Array.isArray(v) ? v : [v]).filter((id): id is string => typeof id === 'string')
      })
      const account = engine.account()
      // The spaces a request names stay open until its answer is sent (a stream: until it
      // closes), whatever the memory budget.
      if (named.length) {
        const releases = named.map((id) => account.keepOpen(id))
        const release = () => releases.forEach((r) => r())
        pinned.set(request, release)
        reply.raw.once('close', release)
      }
      // A space closed (not opened yet at a restart, or closed under the memory budget) opens
      // here, ahead of the background opening; a route that serves while rows load (search)
      // waits only for its replica.
      if (config.whileSpaceLoads === true) {
        for (const spaceId of named) await account.replicaOpen(spaceId)
        return
      }
      if (named.length === 0) await account.opensSettled()
      for (const spaceId of named) await account.loaded(spaceId)
    })
  }
  app.register(identityRoutes(hub, engine ? { watch: (emit) => watchDirectory(engine.account(), emit) } : undefined))
  if (engine) {
    for (const routes of engineRoutes(engine)) app.register(routes)
    for (const m of modules) if (m.routes) app.register(m.routes, { engine })
  }
  for (const routes of opts.routes ?? []) app.register(routes)
  return app
}
