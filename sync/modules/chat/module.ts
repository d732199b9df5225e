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
      search: { scope: 'chat', fields: ['text'] },
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
          creator: R.synced({ type: 'string', readOnly: true, description: 'identity of the signer of the creating change' }),
          createdAt: R.synced({ ...R.instant, readOnly: true }),
          modifiedAt: R.synced({ ...R.instant, readOnly: true, description: 'equal to createdAt until an edit' }),
          text: R.synced({ type: 'string', maxLength: 32768, description: 'markdown, at most 32 KiB (UTF-8); required unless attachments is non-empty' }),
          replyToMessageId: R.synced({ type: 'string', maxLength: 256, description: 'create-only soft reference' }),
          mentions: R.synced({ type: 'array', items: { type: 'string' }, maxItems: 64, readOnly: true, description: 'derived by the server from svc://m/<spaceId>/<identity> links and the replied-to creator' }),
          attachments: R.synced({
            type: 'object',
            maxProperties: 32,
            propertyNames: { pattern: '^[A-Za-z0-9_-]{1,64}$' },
            additionalProperties: { type: 'object', properties: { type: { type: 'string' }, link: { type: 'string', maxLength: 2048 } }, required: ['type', 'link'] },
            description: 'create-only',
          }),
          reactions: R.synced({
            type: 'object',
            additionalProperties: { type: 'object', additionalProperties: {} },
            description: 'emoji -> {identity: instant}; each leaf written only by its identity (the reactions route)',
          }),
          agent: R.synced({
            type: 'object',
            properties: {
              name: { type: 'string', maxLength: 256 },
              debugLink: { type: 'string', maxLength: 2048 },
              done: { type: 'boolean' },
              verified: { type: 'boolean', readOnly: true, description: 'computed on read (sync/modules/agents/verify.ts): the sender created the agent trigger the debugLink names' },
            },
            required: ['name', 'done'],
            description: 'create-only; a hint, not signature-verified; read with `verified`',
          }),
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
