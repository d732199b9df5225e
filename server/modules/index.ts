import { chatServerModule } from './chat.ts'
import { makeEditorServerModule } from './editor.ts'
import { chatReadServerModule } from './chat-read.ts'
import { eventsServerModule } from './events.ts'
import { agentsServerModule } from './agents.ts'
import { searchServerModule } from './search.ts'
import { makeFilesServerModule } from './files.ts'
import type { EditorOptions } from '../../sync/modules/editor/module.ts'
import type { FilesOptions } from '../../sync/modules/files/service.ts'
import { pushServerModule } from './push.ts'
import { localFieldsModule } from '../../sync/modules/local-fields/module.ts'
import { withRoutes, type AnyServerModule } from './module.ts'

export { withRoutes, type ServerModule, type AnyServerModule, type ModuleRouteOptions } from './module.ts'

/**
 * The release's modules with their routes: what `svc serve` hands to both the daemon's engine
 * and `buildApp`. The same modules, in the same order, as sync/modules/index.ts
 * DEFAULT_MODULES (test/routes/module-seam.test.ts checks it).
 */
export const SERVER_MODULES: readonly AnyServerModule[] = serverModules()

/** The settings a module takes, by module (`svc serve` builds them from its configuration). */
export interface ModuleSettings {
  editor?: EditorOptions
  files?: FilesOptions
}

/** The release's modules with their routes, each built with its settings (the defaults where absent). */
export function serverModules(settings: ModuleSettings = {}): AnyServerModule[] {
  return [
    makeEditorServerModule(settings.editor),
    chatServerModule,
    chatReadServerModule,
    eventsServerModule,
    agentsServerModule,
    searchServerModule,
    makeFilesServerModule(settings.files),
    pushServerModule,
    // No routes of its own: `POST {S}/modify` with `scope: local` reaches it through the seam's `localWrites`.
    withRoutes(localFieldsModule),
  ]
}
