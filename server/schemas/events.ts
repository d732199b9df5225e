import { Type } from '@sinclair/typebox'
import { JsonValue } from './common.ts'

/**
 * chat.md "Event envelope" as a publish body. Strings are checked for grammar by the bus
 * (sync/modules/events/envelope.ts), so an empty `type` is `request.missing_field` and a bad
 * one `request.invalid_field` as the spec says; `sender` is not a key here, so supplying it is
 * `request.unknown_field`.
 */
export const PublishBody = Type.Object(
  {
    type: Type.Optional(Type.String({ maxLength: 1024, description: 'dotted lowercase slug `[a-z0-9_]+(.[a-z0-9_]+)*`, at most 128 chars' })),
    scope: Type.Optional(Type.String({ maxLength: 64, description: '`device`, `account` or `space`' })),
    spaceId: Type.Optional(Type.String({ maxLength: 256, description: 'required iff scope is space' })),
    target: Type.Optional(Type.String({ maxLength: 1024, description: '`[A-Za-z0-9._-]{1,128}`: an object, run or process id' })),
    data: Type.Optional(JsonValue({ description: 'free-form JSON, at most 64 KiB marshaled' })),
  },
  { additionalProperties: false },
)

export const PublishResult = Type.Object({ subscribers: Type.Integer({ description: 'local subscribers matched; 0 is still success' }) })

const Repeated = (description: string) => Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { description }))

export const SubscribeQuery = Type.Object(
  {
    scope: Repeated('repeatable; device, account, space'),
    spaceId: Repeated('repeatable; admits space events of these spaces'),
    type: Repeated('repeatable; exact, or a prefix ending `.*`'),
    target: Repeated('repeatable'),
  },
  { additionalProperties: false },
)

export const ProcessParams = Type.Object({
  processId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._-]+$', description: "the process id (the events' `target`)" }),
})

export const ProgressBody = Type.Object(
  {
    progress: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Number(), { maxProperties: 16, description: 'e.g. `{done, total}`' })),
    message: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
)

export const FinishBody = Type.Object(
  {
    status: Type.Union([Type.Literal('done'), Type.Literal('failed'), Type.Literal('cancelled')], {
      description: 'the final event: process.done, process.failed or process.cancelled',
    }),
    error: Type.Optional(Type.String({ maxLength: 4096, description: 'why it failed' })),
    result: Type.Optional(JsonValue({ description: 'free-form; the event stays within 64 KiB' })),
  },
  { additionalProperties: false },
)

export const CancelBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 1024 })) }, { additionalProperties: false })
