import { chatServerModule } from './chat.ts'
import { editorServerModule } from './editor.ts'
import { chatReadServerModule } from './chat-read.ts'
import { eventsServerModule } from './events.ts'
import { agentsServerModule } from './agents.ts'
import { searchServerModule } from './search.ts'
import { filesServerModule } from './files.ts'
import { pushServerModule } from './push.ts'
import type { AnyServerModule } from './module.ts'

export { withRoutes, type ServerModule, type AnyServerModule, type ModuleRouteOptions } from './module.ts'

/**
 * The release's modules with their routes: what `svc serve` hands to both the daemon's engine
 * and `buildApp`. The same modules, in the same order, as sync/modules/index.ts
 * DEFAULT_MODULES (test/routes/module-seam.test.ts checks it).
 */
export const SERVER_MODULES: readonly AnyServerModule[] = [editorServerModule, chatServerModule, chatReadServerModule, eventsServerModule, agentsServerModule, searchServerModule, filesServerModule, pushServerModule]
