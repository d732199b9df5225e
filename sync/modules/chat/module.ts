import { defineModule } from '../../space/module.ts'
import { RECORD_SCHEMA as R } from '../../space/types/index.ts'
import { chatWriteRule } from './authorship.ts'
import { CHAT_ERROR_CODES } from './errors.ts'

/**
 * Chat's dataset kind (chat.md): the shared-only `chat_messages` collection, whose changes
 * version history leaves out, and whose types only the general-chat root may carry. Declared now because types and bundles already refer to it (the
 * catalog's general-chat root declares it); chat's service, routes and feeds come with the chat
 * issue, as additions to this module.
 */
export const chatModule = defineModule({
  name: 'chat',
  errorCodes: CHAT_ERROR_CODES,
  datasets: [
    {
      kind: 'chat',
      canonicalKey: 'messages',
      canonicalCollection: 'chat_messages',
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
})
