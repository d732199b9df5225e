import { defineModule } from '../../../space/module.ts'
import { ChatReadService } from './service.ts'

/**
 * Chat read state as a module of its own (it serves no dataset: it reads chat's `chat_messages`
 * and the account's marks): its service per space, its overlays (flags on message records,
 * counters on chat rows) and its commit hook. Kept apart from the chat module so each has one
 * service; it must come after chat in a module list only by convention (it needs nothing of
 * chat's service).
 */
export const chatReadModule = defineModule({
  name: 'chat-read',
  service: (ctx) => new ChatReadService(ctx),
  onCommit: (change, service) => service.committed(change),
  overlay: {
    records: (service, objectId, dataset, docs) => service.overlayRecords(objectId, dataset, docs),
    row: (service, objectId, doc) => service.overlayRow(objectId, doc),
  },
})
