import type { FastifyPluginAsync } from 'fastify'
import { ProcessRegistry, type ProcessRecord } from '../../node/daemon/processes.ts'
import { searchModule } from '../../sync/modules/search/module.ts'
import { runSearch } from '../../sync/modules/search/search.ts'
import type { SearchIndex } from '../../sync/modules/search/service.ts'
import { typed } from '../http/type-provider.ts'
import { SearchBody, SearchReply } from '../schemas/search.ts'
import { SpaceParams } from '../schemas/spaces.ts'
import { withRoutes, type ModuleRouteOptions } from './module.ts'

/**
 * `POST {S}/search` (spec core.md "Spaces"), and the index work of every open space in
 * `GET /v1/processes` (`index.fts.<spaceId>`, `index.embed.<spaceId>`, past 3 s). Every rule
 * is the module's (sync/modules/search/).
 */
const searchRoutes: FastifyPluginAsync<ModuleRouteOptions> = async (root, { engine }) => {
  const app = typed(root)
  const registry = (engine as { processes?: unknown }).processes
  if (registry instanceof ProcessRegistry) {
    const remove = registry.addSource(() => {
      const out: ProcessRecord[] = []
      const account = engine.account()
      for (const sp of [...account.openSpaces(), ...account.loadingSpaces()]) {
        let idx: SearchIndex
        try {
          idx = sp.services.of(searchModule)
        } catch {
          continue
        }
        out.push(...idx.work.list())
      }
      return out
    })
    root.addHook('onClose', async () => remove())
  }

  app.post(
    '/v1/spaces/:spaceId/search',
    // Answered from the saved index while the space's rows still load after a restart.
    {
      config: { whileSpaceLoads: true },
      schema: { summary: 'Search the space (full-text, vector or hybrid) in the local index', params: SpaceParams, body: SearchBody, response: { 200: SearchReply } },
    },
    async (request) => runSearch(engine.account().searchable(request.params.spaceId).services.of(searchModule), request.body),
  )
}

/** Search served over HTTP (its codes are core codes: server/errors.ts gives their statuses). */
export const searchServerModule = withRoutes(searchModule, searchRoutes)
