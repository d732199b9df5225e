import Fastify, { type FastifyInstance } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'
import { agentsModule } from '../../sync/modules/agents/module.ts'
import type { AgentsHost } from '../../node/agents/host.ts'
import { installBodyParsing } from '../http/body.ts'
import { BODY_TIMEOUT_MS, bodyTimeout } from '../http/body-timeout.ts'
import { clientErrorHandler } from '../http/client-errors.ts'
import { installErrorHandling, sendError, toSvcError } from '../http/error-handler.ts'
import { guardRequest } from '../http/security.ts'
import { typed } from '../http/type-provider.ts'
import { AJV_OPTIONS, coerceQuery } from '../http/validation.ts'
import { ErrorStatuses, type ModuleErrorStatus } from '../errors.ts'
import { ElectionResult, PatchTriggerBody, RunBody, RunEnvelopeSchema, RunList, SpaceQuery, TriggerList, TriggerParams, TriggerResult } from '../schemas/agents.ts'
import { withRoutes } from './module.ts'

const AGENTS_STATUSES: ModuleErrorStatus = { 'agents.trigger_not_found': 404, 'agents.program_not_found': 404 }

/**
 * Agents on the HTTP app: no `/v1` route of their own (records are written with
 * `POST {S}/modify` and read with `{S}/query`, chat.md); the control API is a separate loopback
 * listener, `buildAgentControlApp` below, that `svc serve` starts.
 */
export const agentsServerModule = withRoutes(agentsModule, undefined, AGENTS_STATUSES)

/** chat.md "Agent control API": default port. */
export const DEFAULT_CONTROL_PORT = 7010

/**
 * The control API's edges, the main API's (docs/api.md "HTTP edges"): the header section within
 * 10 s (server/app.ts HEADERS_TIMEOUT_MS, not imported: app.ts imports this module through the
 * module list) and a body within 10 s of its headers, each answered 408 `request.timeout`.
 * Without them a client that sends half a request holds a connection for Node's defaults
 * (60 s for headers, checked every 30 s; 5 minutes for a body).
 */
export const CONTROL_TIMEOUTS = { headersTimeoutMs: 10_000, bodyTimeoutMs: BODY_TIMEOUT_MS } as const

export interface ControlAppOptions {
  /** How long the request headers may take (default CONTROL_TIMEOUTS; tests shorten it). */
  headersTimeoutMs?: number
  /** How long a request body may take to arrive (default CONTROL_TIMEOUTS; tests shorten it). */
  bodyTimeoutMs?: number
}

/**
 * The control API (chat.md "Agent control API", Authentication 5): loopback only, no token,
 * with the main API's Host and Origin guards (a web page cannot drive it by DNS rebinding or a
 * no-preflight POST) and its timeouts. `host()` is the booted account's agents, undefined while
 * none is booted (401 `auth.required`). Mutations write the `agent_triggers` record; the
 * registry follows.
 */
export function buildAgentControlApp(host: () => AgentsHost | undefined, opts: ControlAppOptions = {}): FastifyInstance {
  const statuses = new ErrorStatuses([agentsServerModule])
  const headersTimeoutMs = opts.headersTimeoutMs ?? CONTROL_TIMEOUTS.headersTimeoutMs
  const app = Fastify({
    logger: false,
    bodyLimit: 1024 * 1024,
    exposeHeadRoutes: false,
    ajv: { customOptions: AJV_OPTIONS },
    frameworkErrors: (err, request, reply) => void sendError(reply, toSvcError(err, request, statuses), statuses),
    // Parser errors (a header section that never ends among them) answer with the envelope.
    clientErrorHandler,
    http: {
      // The Host rules live in server/http/security.ts, as on the main API.
      requireHostHeader: false,
      headersTimeout: headersTimeoutMs,
      // Node checks the headers timeout on this interval; its 30 s default would let a slow client stay 40 s.
      connectionsCheckingInterval: Math.max(100, Math.min(1000, headersTimeoutMs / 4)),
    },
  })
  installBodyParsing(app)
  installErrorHandling(app, statuses)
  app.addHook('onRequest', async (request, reply) => guardRequest(request, reply))
  app.addHook('onRequest', bodyTimeout(opts.bodyTimeoutMs ?? CONTROL_TIMEOUTS.bodyTimeoutMs))
  app.addHook('preValidation', async (request) => coerceQuery(request))
  const agents = () => {
    const h = host()
    if (!h) throw new SvcError('auth.required', 'no account is booted')
    return h
  }
  const r = typed(app)

  r.get('/election', { schema: { summary: 'The agent election as this device sees it', response: { 200: ElectionResult } } }, async () => {
    const v = await agents().electionView()
    return { app: v.app, enabled: v.enabled, active: v.active, peerId: v.peerId, winner: v.winner }
  })
  r.get('/triggers', { schema: { summary: "This device's registry: definition, owner, enabled, rollups, stats", response: { 200: TriggerList } } }, async () => ({
    triggers: await agents().triggers(),
  }))
  r.get('/triggers/:id', { schema: { params: TriggerParams, querystring: SpaceQuery, response: { 200: TriggerResult } } }, async (req) =>
    agents().trigger(req.params.id, req.query.spaceId),
  )
  r.get(
    '/triggers/:id/runs',
    { schema: { summary: 'The last 20 runs, newest first', params: TriggerParams, querystring: SpaceQuery, response: { 200: RunList } } },
    async (req) => ({
      runs: await agents().runs(req.params.id, req.query.spaceId),
    }),
  )
  r.patch(
    '/triggers/:id',
    { schema: { summary: 'A new spec (re-arms forward) or enabled', params: TriggerParams, querystring: SpaceQuery, body: PatchTriggerBody, response: { 200: TriggerResult } } },
    async (req) => agents().patch(req.params.id, req.body, req.query.spaceId),
  )
  r.post(
    '/triggers/:id/enable',
    { schema: { summary: 'Enable; resets the breaker', params: TriggerParams, querystring: SpaceQuery, response: { 200: TriggerResult } } },
    async (req) => agents().enable(req.params.id, req.query.spaceId),
  )
  r.post('/triggers/:id/disable', { schema: { params: TriggerParams, querystring: SpaceQuery, response: { 200: TriggerResult } } }, async (req) =>
    agents().disable(req.params.id, req.query.spaceId),
  )
  r.post('/run', { schema: { summary: 'Run a program by spec or caller-supplied source', body: RunBody, response: { 200: RunEnvelopeSchema } } }, async (req) => {
    const b = req.body
    if (b.program === undefined && b.source === undefined) throw new SvcError('request.missing_field', 'program or source is required', { field: 'program' })
    const res = await agents().run({ program: b.program, programHash: b.programHash, source: b.source, args: b.args ?? {}, spaceId: b.spaceId })
    return { status: res.status, traceRef: res.traceRef, durationMs: res.durationMs, fuelUsed: res.fuelUsed, value: res.value, error: res.error }
  })
  return app
}

/** Loopback only, like the main server: anything else is refused before binding. */
export function controlHost(v: string): '127.0.0.1' | '::1' {
  const s = v.trim().toLowerCase()
  if (s === '127.0.0.1' || s === 'localhost') return '127.0.0.1'
  if (s === '::1' || s === '[::1]') return '::1'
  throw new SvcError('request.invalid_field', `refusing to bind the agent control API to "${v}": loopback only (127.0.0.1, ::1 or localhost)`, { field: 'host' })
}

/** Starts the control listener; resolves with its port. */
export async function listenAgentControl(app: FastifyInstance, opts: { host?: string; port?: number } = {}): Promise<number> {
  const host = controlHost(opts.host ?? '127.0.0.1')
  await app.listen({ host, port: opts.port ?? DEFAULT_CONTROL_PORT })
  const addr = app.server.address()
  return typeof addr === 'object' && addr ? addr.port : (opts.port ?? DEFAULT_CONTROL_PORT)
}
