import swagger from '@fastify/swagger'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { ErrorEnvelope } from '../schemas/common.ts'

interface BodySchema {
  properties?: unknown
  additionalProperties?: unknown
}

/**
 * Marks each operation with a body: `x-strict: true` when its body schema refuses unknown
 * keys (`additionalProperties: false`, answered with 400 `request.unknown_field`), or
 * `x-strict: false` plus `x-unknown-keys: drop` for the routes that drop them. Every route also
 * documents the error envelope for its 4xx and 5xx responses.
 */
function annotate(route: RouteOptions): void {
  const schema: Record<string, unknown> = { ...(route.schema ?? {}) }
  const body = schema.body as BodySchema | undefined
  if (body) {
    const drop = route.config?.unknownKeys === 'drop'
    if (drop && body.additionalProperties === false) {
      throw new Error(`${route.url}: a route that drops unknown keys needs an open body schema`)
    }
    // Strict is the rule (spec Conventions 5): an object body with named fields must say
    // additionalProperties: false, or opt into dropping unknown keys. Open maps (records) pass.
    if (!drop && body.properties !== undefined && body.additionalProperties === undefined) {
      throw new Error(`${route.url}: declare additionalProperties on the body schema (false = strict) or set config.unknownKeys`)
    }
    schema['x-strict'] = body.additionalProperties === false
    if (drop) schema['x-unknown-keys'] = 'drop'
  }
  if (schema.hide !== true) {
    // Not `default`: Fastify would serialize success replies of schema-less routes with it.
    const envelope = { $ref: 'ErrorEnvelope#' }
    schema.response = { '4xx': envelope, '5xx': envelope, ...(schema.response as object | undefined) }
  }
  route.schema = schema
}

/** Registers @fastify/swagger (OpenAPI 3.1); serve the document with `openApiDocument(app)`. */
export function installOpenApi(app: FastifyInstance, version: string): void {
  app.addSchema(ErrorEnvelope)
  app.addHook('onRoute', annotate)
  app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc',
        version,
        description: 'Local-first collaboration daemon. Loopback only; see docs/api.md.',
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  })
}
