import { Type } from '@sinclair/typebox'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import { JsonValue } from './common.ts'

/** chat.md "Agent control API": bodies, params and results of the loopback control listener. */

export const TriggerParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 256, description: 'trigger record id (e.g. chat-watch)' }) })

export const SpaceQuery = Type.Object(
  { spaceId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'the space, when the id is in several (chat-watch is in every space with a general chat)' })) },
  { additionalProperties: false },
)

export const PatchTriggerBody = Type.Object(
  {
    spec: Type.Optional(JsonValue({ description: 'a new spec: re-arms forward' })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

export const RunBody = Type.Object(
  {
    program: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: '<name>@v<N>, agent:<name>@v<N> or internal:chat-watch' })),
    source: Type.Optional(Type.String({ maxLength: AGENT_LIMITS.sourceBytes, description: 'caller-supplied program text (defines main(args, svc))' })),
    programHash: Type.Optional(
      Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'hex SHA-256 of the source: runs a registry version another account created, only if its source hashes to this' }),
    ),
    args: Type.Optional(Type.Record(Type.String(), JsonValue())),
    spaceId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'binds the capability API (query, modify, chatSend, publish) to this space' })),
  },
  { additionalProperties: false },
)

export const RunEnvelopeSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('failed')]),
  traceRef: Type.String(),
  durationMs: Type.Number(),
  fuelUsed: Type.Number(),
  value: JsonValue(),
  error: Type.Union([Type.String(), Type.Null()]),
})

export const ElectionResult = Type.Object({
  app: Type.String(),
  enabled: Type.Boolean(),
  active: Type.Boolean(),
  peerId: Type.String(),
  winner: Type.Union([Type.String(), Type.Null()]),
})

const Record_ = Type.Record(Type.String(), JsonValue())
export const TriggerResult = Record_
export const TriggerList = Type.Object({ triggers: Type.Array(Record_) })
export const RunList = Type.Object({ runs: Type.Array(Record_) })
