import { Type } from '@sinclair/typebox'
import { CHAT_LIMITS } from '../../sync/modules/chat/schema.ts'
import { Id } from './spaces.ts'

/** `:objectId` is the chat root: `bundle.rootId` of the general-chat bundle (chat.md). */
export const ChatParams = Type.Object({ spaceId: Id('space id'), objectId: Id('chat root id (`bundle.rootId` of system:general-chat/v1)') })
export const MessageParams = Type.Object({ ...ChatParams.properties, msgId: Id('message id (`recordIds[0]` of the send)') })
export const ReactionParams = Type.Object({
  ...MessageParams.properties,
  emoji: Type.String({
    minLength: 1,
    maxLength: CHAT_LIMITS.emojiBytes,
    description: 'the reaction, a URL-encoded path segment: 1 to 64 bytes, no dots, spaces or control characters',
  }),
})

/** The message bodies are declared with the message record, once (sync/modules/chat/schema.ts). */
export { ChatSendBody as SendBody, ChatEditBody as EditBody } from '../../sync/modules/chat/schema.ts'
