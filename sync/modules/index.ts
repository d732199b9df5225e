import type { AnyModule } from '../space/module.ts'
import { chatModule } from './chat/module.ts'
import { chatReadModule } from './chat/read-state/module.ts'
import { editorModule } from './editor/module.ts'
import { eventsModule } from './events/module.ts'
import { agentsModule } from './agents/module.ts'
import { searchModule } from './search/module.ts'
import { filesModule } from './files/module.ts'
import { pushModule } from './push/module.ts'
import { localFieldsModule } from './local-fields/module.ts'

export { agentsModule, chatModule, chatReadModule, editorModule, eventsModule, filesModule, localFieldsModule, pushModule, searchModule }

/**
 * The release's modules, in order (hooks run in this order). A daemon hands this list to its
 * account engine; server/modules/index.ts pairs each with its routes for the HTTP app. Adding a
 * module adds a line here and nowhere else in sync/ (docs/architecture.md "Adding a module").
 */
export const DEFAULT_MODULES: readonly AnyModule[] = [
  editorModule,
  chatModule,
  chatReadModule,
  eventsModule,
  agentsModule,
  searchModule,
  filesModule,
  pushModule,
  localFieldsModule,
]
