import { defineModule } from '../../space/module.ts'
import { FILES_ERROR_CODES } from './errors.ts'
import { FilesService, type FilesOptions } from './service.ts'

/**
 * Files as a module (spec core.md "Files", docs/files.md): records in objects' `files`
 * collections (written by the service, synced like any record), and one account service that
 * keeps the blocks, the cache and the pins across spaces. Its routes plugin is
 * server/modules/files.ts; its P2P half, the block exchange, is sync/p2p/block-exchange.ts,
 * started by the daemon's node/p2p/protocols/blocks.ts and by a page's BrowserSync.
 */
export function makeFilesModule(opts: FilesOptions = {}) {
  return defineModule({
    name: 'files',
    errorCodes: FILES_ERROR_CODES,
    accountService: (account) => new FilesService(account, opts),
  })
}

export const filesModule = makeFilesModule()
