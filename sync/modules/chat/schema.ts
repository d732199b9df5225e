import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { datasetSchemaOf, instant, local } from '../../space/types/record-schema.ts'
import { MAX_MENTIONS } from './mentions.ts'

/**
 * The chat message, written once (chat.md "Chat message"): the dataset schema of
 * `chat_messages`, the HTTP bodies of `POST`/`PATCH {O}/chat/messages` and the message type all
 * come from the fields below. What JSON Schema cannot say (sizes in UTF-8 bytes, text or an
 * attachment) is validate.ts's, against the same limits.
 */

/** chat.md Limits (sizes in UTF-8 bytes; a schema's `maxLength` counts characters, so it is only a first bound). */
export const CHAT_LIMITS = {
  textBytes: 32 * 1024,
  replyToBytes: 256,
  attachments: 32,
  attachmentLinkBytes: 2 * 1024,
  attachmentTypeBytes: 64,
  agentNameBytes: 256,
  agentDebugLinkBytes: 2 * 1024,
  /** A reaction key (our bound: the spec gives none; a flag sequence with modifiers fits easily). */
  emojiBytes: 64,
  mentions: MAX_MENTIONS,
} as const

/** Attachment ids (chat.md "Chat message"). */
export const ATTACHMENT_KEY_PATTERN = '^[A-Za-z0-9_-]{1,64}$'
/** `svc://f/<spaceId>/<fileId>` */
export const FILE_LINK_PATTERN = '^svc://f/[^/\\s#?]+/[^/\\s#?]+$'
/** `svc://<spaceId>/<debugObjId>#<anchor>` */
export const DEBUG_LINK_PATTERN = '^svc://[^/\\s#?]+/[^/\\s#?]+#\\S+$'

const Text = Type.String({ maxLength: CHAT_LIMITS.textBytes, description: 'markdown, at most 32 KiB (UTF-8)' })
const ReplyTo = Type.String({ maxLength: CHAT_LIMITS.replyToBytes, description: 'soft reference, create-only, at most 256 bytes; not validated' })

const Attachment = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: CHAT_LIMITS.attachmentTypeBytes, description: 'open set: link and image are known; render others as a plain link' }),
    link: Type.String({ maxLength: CHAT_LIMITS.attachmentLinkBytes, pattern: FILE_LINK_PATTERN, description: 'svc://f/<spaceId>/<fileId>, at most 2 KiB' }),
  },
  { additionalProperties: false },
)
const Attachments = Type.Record(Type.String({ pattern: ATTACHMENT_KEY_PATTERN }), Attachment, {
  maxProperties: CHAT_LIMITS.attachments,
  description: 'create-only; at most 32; id [A-Za-z0-9_-]{1,64}',
})

const AGENT_FIELDS = {
  name: Type.String({ minLength: 1, maxLength: CHAT_LIMITS.agentNameBytes, description: 'at most 256 bytes' }),
  debugLink: Type.Optional(
    Type.String({ maxLength: CHAT_LIMITS.agentDebugLinkBytes, pattern: DEBUG_LINK_PATTERN, description: 'svc://<spaceId>/<debugObjId>#<anchor>, at most 2 KiB' }),
  ),
  done: Type.Boolean(),
}

/**
 * The agent group a client sends; any fault in it answers 400 `chat.agent_invalid`
 * (`x-error-code`, see server/http/validation.ts), the module's code, not a generic `request.*` one.
 */
const AgentInput = Type.Object(AGENT_FIELDS, {
  additionalProperties: false,
  'x-error-code': 'chat.agent_invalid',
  description: 'marks an agent-authored message (a hint, not signature-verified); create-only',
})

/**
 * Fields the server stamps or derives: listed in the bodies so a client supplying one is told it
 * is read-only (400 `request.invalid_field`, `details.readOnly`) rather than unknown.
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
export const STAMPED_FIELDS: readonly string[] = Object.keys(STAMPED)

/** What a client writes when it sends a message. */
const SEND_FIELDS = {
  text: Type.Optional(Text),
  replyToMessageId: Type.Optional(ReplyTo),
  attachments: Type.Optional(Attachments),
  agent: Type.Optional(AgentInput),
}
/** Body of `POST {O}/chat/messages`. */
export const ChatSendBody = Type.Object(
  { ...SEND_FIELDS, ...STAMPED },
  { additionalProperties: false, description: 'text or at least one attachment (else 400 chat.text_required)' },
)

/** Body of `PATCH {O}/chat/messages/:msgId`. */
export const ChatEditBody = Type.Object({ text: Text, ...STAMPED }, { additionalProperties: false, description: 'replaces the text; modifiedAt and mentions follow' })

/**
 * A record of `chat_messages` as a reader gets it: what the server stamps, what the client
 * wrote (the send fields above, so the two cannot drift apart), and what this device computes.
 */
export const ChatMessageRecord = Type.Object(
  {
    id: Type.String({ readOnly: true }),
    _ver: Type.Optional(Type.Object({ id: Type.Optional(Type.String()) }, { readOnly: true })),
    creator: Type.Optional(Type.String({ readOnly: true, description: 'identity of the signer of the creating change' })),
    createdAt: Type.Optional(instant({ readOnly: true })),
    modifiedAt: Type.Optional(instant({ readOnly: true, description: 'equal to createdAt until an edit' })),
    ...SEND_FIELDS,
    // Read back, the group carries `verified` and whatever a newer release adds.
    agent: Type.Optional(
      Type.Object(
        {
          ...AGENT_FIELDS,
          verified: Type.Optional(
            Type.Boolean({ readOnly: true, description: 'computed on read (sync/modules/agents/verify.ts): the sender created the agent trigger the debugLink names' }),
          ),
        },
        { description: 'create-only; a hint, not signature-verified; read with `verified`' },
      ),
    ),
    mentions: Type.Optional(
      Type.Array(Type.String(), {
        maxItems: CHAT_LIMITS.mentions,
        readOnly: true,
        description: 'derived by the server from svc://m/<spaceId>/<identity> links and the replied-to creator',
      }),
    ),
    reactions: Type.Optional(
      Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), {
        description: 'emoji -> {identity: instant}; each leaf written only by its identity (the reactions route)',
      }),
    ),
    unread: Type.Optional(local(Type.Boolean({ readOnly: true }))),
    unreadMention: Type.Optional(local(Type.Boolean({ readOnly: true }))),
    unreadReactions: Type.Optional(local(Type.Boolean({ readOnly: true }))),
  },
  { 'x-idRule': 'auto' },
)

export type ChatMessage = Static<typeof ChatMessageRecord>

/** The dataset schema `GET {S}/datasets` lists for `chat_messages`. */
export const CHAT_MESSAGE_SCHEMA = datasetSchemaOf(ChatMessageRecord)

/**
 * A document read from `chat_messages` that has a message's shape. Send checks every field, but
 * a member's own client can write anything the authorship rule lets through.
 */
export const isChatMessage = (doc: unknown): doc is ChatMessage => Value.Check(ChatMessageRecord, doc)
