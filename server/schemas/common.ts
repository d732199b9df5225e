import { Type, type TSchema } from '@sinclair/typebox'
import type { Json } from '../../sync/crdt/ops.ts'

/** The error envelope every non-2xx response carries (spec Errors). */
export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: '`<section>.<fault>`' }),
      message: Type.String({ description: 'display-safe' }),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { $id: 'ErrorEnvelope', title: 'ErrorEnvelope' },
)

/** Spec Conventions 6: instants travel as `{$date: <ISO 8601 UTC>}`. */
export const Instant = Type.Object({ $date: Type.String({ format: 'date-time' }) })

export const instant = (d: Date) => ({ $date: d.toISOString() })

/** The optional control header of managed servers, documented on the routes that read it. */
export const ControlHeader = Type.Object({
  'x-svc-control-token': Type.Optional(Type.String({ description: 'managed mode: the token printed on start' })),
})

/** A 204 response. */
export const NoContent = Type.Null({ description: 'no content' })

/** An SSE response, for the OpenAPI document (the stream writes frames, not one JSON value). */
export const EventStream = (description: string): TSchema => Type.Unsafe({ description, content: { 'text/event-stream': { schema: { type: 'string' } } } })

/** Any JSON value; its static type is the engine's `Json` (a parsed body holds nothing else). */
export const JsonValue = (options: { description?: string } = {}) => Type.Unsafe<Json>({ ...options })
