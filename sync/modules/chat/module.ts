import { defineModule } from '../../space/module.ts'
import { chatWriteRule } from './authorship.ts'
import { CHAT_ERROR_CODES } from './errors.ts'
import { CHAT_KIND, CHAT_MESSAGES, ChatMessages } from './messages.ts'
import { CHAT_MESSAGE_SCHEMA } from './schema.ts'

/**
 * Chat as a module (chat.md, docs/chat.md):
 * - one dataset kind, `chat`: the shared-only `chat_messages` collection, whose changes version
 *   history leaves out, whose types only the general-chat root may carry, and whose write rule
 *   (authorship.ts) keeps edits and deletes to the author and reaction leaves to their signer
 *   on every peer;
 * - one service per space, ChatMessages (the write routes: send, edit, delete, react);
 * - no feed of its own: reading is the data plane (`{S}/query`, `{S}/query/subscribe`).
 * Its routes plugin is server/modules/chat.ts.
 */
export const chatModule = defineModule({
  name: 'chat',
  errorCodes: CHAT_ERROR_CODES,
  datasets: [
    {
      kind: CHAT_KIND,
      canonicalKey: 'messages',
      canonicalCollection: CHAT_MESSAGES,
      sharedOnly: true,
      search: { scope: 'chat', fields: ['text'] },
      history: false,
      // chat.md: only the server-installed general-chat root carries a chat type.
      reservedCarrier: true,
      // Author-only edits and deletes, signer-only reaction leaves, on every peer (authorship.ts).
      writeRule: chatWriteRule,
      // One declaration gives this schema, the HTTP bodies and the message type (schema.ts).
      schema: CHAT_MESSAGE_SCHEMA,
    },
  ],
  service: ({ space, types }) => new ChatMessages(space, types),
})
