import type { Static, TSchema } from '@sinclair/typebox'
import type { FastifyBaseLogger, FastifyInstance, FastifyTypeProvider, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'

/**
 * Fastify's type provider for TypeBox: a route's `request.body`, `params`, `querystring` and
 * `headers` take the static type of the schema that validates them, so a route never restates
 * (or casts to) a shape its schema already owns. The validator half of
 * `@fastify/type-provider-typebox`, without a new dependency (Fastify's Ajv validates).
 */
export interface TypeBoxTypeProvider extends FastifyTypeProvider {
  readonly validator: this['schema'] extends TSchema ? Static<this['schema']> : unknown
  /**
   * Replies stay untyped: response schemas document and serialize (fast-json-stringify drops
   * undeclared keys), while the engine's own types say what a handler returns.
   */
  readonly serializer: unknown
}

export type TypedApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

/** The same instance, seen through the TypeBox provider (a route plugin's first line). */
export const typed = (app: FastifyInstance): TypedApp => app.withTypeProvider<TypeBoxTypeProvider>()
