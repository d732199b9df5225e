import { Type } from '@sinclair/typebox'
import { Id } from './spaces.ts'

/** `:objectId` is the chat root: `bundle.rootId` of the general-chat bundle (chat.md). */
export const ChatParams = Type.Object({ spaceId: Id('space id'), objectId: Id('chat root id (`bundle.rootId` of system:general-chat/v1)') })
export const MessageParams = Type.Object({ ...ChatParams.properties, msgId: Id('message id (`recordIds[0]` of the send)') })
export const ReactionParams = Type.Object({
  ...MessageParams.properties,
  emoji: Type.String({ minLength: 1, maxLength: 64, description: 'the reaction, a URL-encoded path segment: 1 to 64 bytes, no dots, spaces or control characters' }),
})

/**
 * Fields the server stamps or derives (chat.md "Chat message"): listed so a client supplying one
 * is told it is read-only (400 `request.invalid_field`, `details.readOnly`) rather than unknown.
 */
const stamped = (what: string) => Type.Optional(Type.Unknown({ readOnly: true, description: `${what}; read-only, supplying it is 400 request.invalid_field` }))
const STAMPED = {
  id: stamped('change-derived'),
  creator: stamped('stamped from the change envelope'),
  createdAt: stamped('stamped by the server'),
  modifiedAt: stamped('stamped by the server'),
  mentions: stamped('derived from svc://m/<spaceId>/<identity> links and the replied-to creator'),
  reactions: stamped('leaves written by the reactions route'),
  unread: stamped('read state, computed locally'),
  unreadMention: stamped('read state, computed locally'),
  unreadReactions: stamped('read state, computed locally'),
}

const Text = Type.String({ maxLength: 32 * 1024, description: 'markdown, at most 32 KiB (UTF-8)' })

const Attachment = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64, description: 'open set: link and image are known; render others as a plain link' }),
    link: Type.String({ maxLength: 2048, pattern: '^svc://f/[^/\\s#?]+/[^/\\s#?]+$', description: 'svc://f/<spaceId>/<fileId>, at most 2 KiB' }),
  },
  { additionalProperties: false },
)

/**
 * The agent group; any fault in it answers 400 `chat.agent_invalid` (`x-error-code`, see
 * server/http/validation.ts), the module's code, not a generic `request.*` one.
 */
const Agent = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256, description: 'at most 256 bytes' }),
    debugLink: Type.Optional(Type.String({ maxLength: 2048, pattern: '^svc://[^/\\s#?]+/[^/\\s#?]+#\\S+$', description: 'svc://<spaceId>/<debugObjId>#<anchor>, at most 2 KiB' })),
    done: Type.Boolean(),
  },
  { additionalProperties: false, 'x-error-code': 'chat.agent_invalid', description: 'marks an agent-authored message (a hint, not signature-verified); create-only' },
)

export const SendBody = Type.Object(
  {
    text: Type.Optional(Text),
    replyToMessageId: Type.Optional(Type.String({ maxLength: 256, description: 'soft reference, create-only, at most 256 bytes; not validated' })),
    attachments: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), Attachment, { maxProperties: 32, description: 'create-only; at most 32; id [A-Za-z0-9_-]{1,64}' }),
    ),
    agent: Type.Optional(Agent),
    ...STAMPED,
  },
  { additionalProperties: false, description: 'text or at least one attachment (else 400 chat.text_required)' },
)

export const EditBody = Type.Object({ text: Text, ...STAMPED }, { additionalProperties: false, description: 'replaces the text; modifiedAt and mentions follow' })
