import { defineModule, type SvcModule } from '../../space/module.ts'
import { SEARCH_LIMITS } from './limits.ts'
import { SearchIndex } from './service.ts'
import { settingsEmbedder, type EmbedderFactory } from './vector-indexer.ts'

/**
 * Search as a module (docs/search.md): no dataset of its own; one SearchIndex per space, fed
 * by the commit hook (local writes and changes from peers alike, deletes and tombstones
 * included), persisted in the device's storage under the module's own store names. It offers
 * the space's object rows a text index, so a document-level `$text` filter in an objects
 * query is answered by the same index. Its routes plugin is server/modules/search.ts.
 */
export function createSearchModule(opts: { embedders?: EmbedderFactory } = {}): SvcModule<SearchIndex> {
  const embedders = opts.embedders ?? settingsEmbedder
  return defineModule({
    name: 'search',
    service: (ctx) => {
      const idx = new SearchIndex(ctx, embedders)
      ctx.space.objectSource().textMatch = (search) => {
        if (idx.state !== 'ready') return undefined
        idx.catchUpRows()
        const ids = new Set<string>()
        for (const h of idx.index.search(search, { limit: SEARCH_LIMITS.maxTextIds, prefixAll: true })) ids.add(h.key.slice(0, h.key.indexOf('/')))
        return (doc) => ids.has(doc.id as string)
      }
      return idx
    },
    onCommit: (change, idx) => idx.committed(change),
  })
}

/** The release's search module: embedders from each space's settings. */
export const searchModule = createSearchModule()
