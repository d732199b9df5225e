import { chatModule } from '../../sync/modules/index.ts'
import { editorServerModule } from './editor.ts'
import { eventsServerModule } from './events.ts'
import { withRoutes, type AnyServerModule } from './module.ts'

export { withRoutes, type ServerModule, type AnyServerModule, type ModuleRouteOptions } from './module.ts'

/**
 * The release's modules with their routes: what `svc serve` hands to both the daemon's engine
 * and `buildApp`. The same modules, in the same order, as sync/modules/index.ts
 * DEFAULT_MODULES (test/server/modules.test.ts checks it).
 */
/** Chat has no routes yet (the chat issue adds them); its codes' statuses (chat.md Errors) are here. */
const chatServerModule = withRoutes(chatModule, undefined, {
  'chat.text_required': 400,
  'chat.agent_invalid': 400,
  'chat.not_author': 403,
  'chat.not_found': 404,
})

export const SERVER_MODULES: readonly AnyServerModule[] = [editorServerModule, chatServerModule, eventsServerModule]
