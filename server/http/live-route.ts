import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'
import { typed } from './type-provider.ts'
import { validationError } from './validation.ts'

/** The GET form's one query parameter: the POST body's JSON (absent: `{}`). */
export const LiveGetQuery = Type.Object(
  { q: Type.Optional(Type.String({ description: "The POST form's JSON body, URL-encoded (absent: {}); validated by the same schema" })) },
  { additionalProperties: false },
)

interface LiveRouteOptions<P extends TSchema, B extends TSchema> {
  config?: Record<string, unknown>
  schema: { summary: string; params?: P; body: B; response: Record<number, TSchema> }
}

/**
 * A live query (SSE) in both forms (issue 39 item 7): `POST url` with the JSON body, and
 * `GET url?q=<the same JSON, URL-encoded>`, which a browser's plain `EventSource` can open (it
 * only ever sends GET). The GET form's `q` is parsed and validated by the POST form's body
 * schema (the same Ajv, defaults and strictness), so both answer the same 400 envelope for the
 * same fault; `q` that is not JSON is 400 `request.bad_json`.
 */
export function liveRoute<P extends TSchema, B extends TSchema>(
  root: FastifyInstance,
  url: string,
  o: LiveRouteOptions<P, B>,
  handler: (request: { params: Static<P>; body: Static<B> }, reply: FastifyReply) => Promise<void>,
): void {
  const app = typed(root)
  const { params, body, summary, response } = o.schema
  app.post(url, { ...(o.config ? { config: o.config } : {}), schema: { summary, ...(params ? { params } : {}), body, response } }, async (request, reply) =>
    handler({ params: request.params as Static<P>, body: request.body as Static<B> }, reply),
  )
  app.get(
    url,
    { schema: { summary: `${summary}; GET form for EventSource: the body as the JSON of ?q=`, ...(params ? { params } : {}), querystring: LiveGetQuery, response } },
    async (request, reply) => handler({ params: request.params as Static<P>, body: bodyOfQ(request, body) }, reply),
  )
}

function bodyOfQ(request: FastifyRequest, schema: TSchema): unknown {
  const q = (request.query as { q?: string }).q
  let body: unknown = {}
  if (q !== undefined) {
    try {
      body = JSON.parse(q)
    } catch {
      throw new SvcError('request.bad_json', 'q must hold the JSON of the POST body', { field: 'q' })
    }
  }
  const validate = request.compileValidationSchema(schema)
  if (!validate(body)) throw validationError(validate.errors ?? [], 'body', request, { schema, data: body })
  return body
}
