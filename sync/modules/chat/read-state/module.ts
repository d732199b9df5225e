import { defineModule, type ModuleRowField } from '../../../space/module.ts'
import { ChatReadService } from './service.ts'

const ENGINE: ModuleRowField = { scope: 'engine' }
const NOTIFY_MODES = ['all', 'mentions', 'none']

/**
 * Chat read state as a module of its own (it serves no dataset: it reads chat's `chat_messages`
 * and the account's marks): its service per space, its overlays (flags on message records,
 * counters on chat rows), its commit hook, and the chat row's `chat` group (chat.md "Chat
 * object": counters written only by the engine, `notifyMode` an account-scope preference set
 * through `POST {S}/properties/:chatObjectId/set/chat`). Kept apart from the chat module so
 * each has one service.
 */
export const chatReadModule = defineModule({
  name: 'chat-read',
  service: (ctx) => new ChatReadService(ctx),
  onCommit: (change, service) => service.committed(change),
  overlay: {
    records: (service, objectId, dataset, docs) => service.overlayRecords(objectId, dataset, docs),
    row: (service, objectId, doc) => service.overlayRow(objectId, doc),
  },
  rowGroups: {
    chat: {
      fields: {
        unreadCount: ENGINE,
        unreadMentions: ENGINE,
        unreadReactionsCount: ENGINE,
        notifyMode: { scope: 'account', check: (v) => (typeof v === 'string' && NOTIFY_MODES.includes(v) ? undefined : 'notifyMode is all, mentions or none') },
      },
      accepts: (service, _objectId, row) => service.isChatRow(row),
    },
  },
})
