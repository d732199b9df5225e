import { defineModule } from '../../space/module.ts'
import { RECORD_SCHEMA as R } from '../../space/types/index.ts'
import { chatWriteRule } from './authorship.ts'
import { CHAT_ERROR_CODES } from './errors.ts'
import { CHAT_KIND, CHAT_MESSAGES, ChatMessages } from './messages.ts'

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
      history: false,
      // chat.md: only the server-installed general-chat root carries a chat type.
      reservedCarrier: true,
      // Author-only edits and deletes, signer-only reaction leaves, on every peer (authorship.ts).
      writeRule: chatWriteRule,
      schema: {
        type: 'object',
        properties: {
          id: R.idField(),
          _ver: R.verField,
          creator: R.synced({ type: 'string', readOnly: true }),
          createdAt: R.synced({ ...R.instant, readOnly: true }),
          modifiedAt: R.synced({ ...R.instant, readOnly: true }),
          text: R.synced({ type: 'string', maxLength: 32768 }),
          replyToMessageId: R.synced({ type: 'string', maxLength: 256 }),
          mentions: R.synced({ type: 'array', items: { type: 'string' }, readOnly: true }),
          attachments: R.synced({ type: 'object' }),
          reactions: R.synced({ type: 'object' }),
          agent: R.synced({ type: 'object', properties: { name: { type: 'string' }, debugLink: { type: 'string' }, done: { type: 'boolean' } } }),
          unread: R.local({ type: 'boolean', readOnly: true }),
          unreadMention: R.local({ type: 'boolean', readOnly: true }),
          unreadReactions: R.local({ type: 'boolean', readOnly: true }),
        },
        required: ['id'],
        'x-idRule': 'auto',
      },
    },
  ],
  service: ({ space, types }) => new ChatMessages(space, types),
})
