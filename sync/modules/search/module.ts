import { defineModule, type SvcModule } from '../../space/module.ts'
import type { FtsIndex } from './fts-index.ts'
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
        // On disk: this query scans (explain says so), and the index comes into memory for
        // the next one.
        if (!idx.forText()) {
          idx.warm()
          return undefined
        }
        // Re-asked whenever the index moved, so a live window's later tests see current text.
        let index: FtsIndex | undefined
        let version = -1
        let ids = new Set<string>()
        return (doc) => {
          idx.catchUpRows()
          // Left memory since (a live window outlives the idle bound): load it again, and
          // answer from the ids already resolved meanwhile.
          const now = idx.forText()
          if (!now) idx.warm()
          else if (index !== now || version !== now.version) {
            index = now
            version = index.version
            ids = new Set()
            for (const h of index.search(search, { limit: SEARCH_LIMITS.maxTextIds, prefixAll: true })) ids.add(h.key.slice(0, h.key.indexOf('/')))
          }
          return ids.has(doc.id)
        }
      }
      return idx
    },
    onCommit: (change, idx) => idx.committed(change),
  })
}

/** The release's search module: embedders from each space's settings. */
export const searchModule = createSearchModule()
