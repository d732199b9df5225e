import type { Env } from '../core/env.ts'
import type { Logger } from '../core/log.ts'
import { filesModule } from '../modules/files/module.ts'
import { FILES } from '../modules/files/limits.ts'
import type { FileInfo, FilesService } from '../modules/files/service.ts'
import { BlockExchange, type BlockExchangeOptions } from '../p2p/block-exchange.ts'
import type { AccountEngine } from '../space/account-engine.ts'

/** How far a `readFile` got: plaintext bytes handed over so far, of the file's size. */
export interface ReadProgress {
  loaded: number
  total: number
}

export interface ReadFileOptions {
  /** Called after each piece (a block, 1 MiB, or less at the file's ends) is fetched, checked and opened. */
  onProgress?: (p: ReadProgress) => void
  /** Stops the read between blocks; what was fetched so far stays stored. */
  signal?: AbortSignal
}

/**
 * The page's files (docs/browser.md "Files"): the files module's service of the account, fed
 * blocks by the daemon's own block exchange (sync/p2p/block-exchange.ts, `/svc/blocks/1.0.0`)
 * over the page's links to hubs and daemons. A block the page lacks is asked of connected
 * peers that may read the space, and of its hubs; each is checked against its address before
 * it is stored in the account's IndexedDB database, and opened with the key in the file
 * record, in the page. Later reads of it need no network. The page serves what it holds to
 * peers that may read the space, bounded as the daemon bounds them.
 */
export class BrowserFiles {
  private constructor(
    private readonly files: FilesService,
    private readonly exchange: BlockExchange,
  ) {}

  /** Undefined when the account runs without the files module. */
  static async start(
    account: AccountEngine,
    o: Pick<BlockExchangeOptions, 'node' | 'identityOf' | 'refused' | 'fault' | 'custodian'> & { env: Env; log: Logger },
  ): Promise<BrowserFiles | undefined> {
    const files = account.services.find(filesModule)
    if (!files) return undefined
    const exchange = await BlockExchange.start({
      ...o,
      spaces: {
        techSpaceId: account.tech.spaceId,
        replica: (id) => (id === account.tech.spaceId ? account.tech.replica : account.held(id)?.replica),
      },
      store: files.store,
      blockTimeoutMs: FILES.blockTimeoutMs,
    })
    files.attachNetwork(exchange)
    return new BrowserFiles(files, exchange)
  }

  /** The live files of a space (or of one object), as `GET {S}/files` lists them: `cached` says whether every block is in this page. */
  list(spaceId: string, objectId?: string): Promise<FileInfo[]> {
    return this.files.list(spaceId, objectId)
  }

  /**
   * A file's bytes, as a Blob of its media type. Blocks missing here are fetched block by block
   * (16 per request, two requests ahead of the reader) from connected peers and hubs; 409
   * `file.not_available` when none delivers one.
   */
  async read(spaceId: string, fileId: string, o: ReadFileOptions = {}): Promise<Blob> {
    o.signal?.throwIfAborted()
    const rec = await this.files.record(spaceId, fileId)
    const { record, body } = await this.files.read(spaceId, fileId, 0, rec.size - 1)
    const parts: Uint8Array<ArrayBuffer>[] = []
    let loaded = 0
    o.onProgress?.({ loaded, total: record.size })
    for await (const piece of body) {
      // Leaving the loop ends the reader's generator, which drops what it fetched ahead for it.
      o.signal?.throwIfAborted()
      parts.push(new Uint8Array(piece))
      loaded += piece.length
      o.onProgress?.({ loaded, total: record.size })
    }
    return new Blob(parts, { type: record.mime })
  }

  /** Counters of the page's block exchange: blocks fetched, served, and what was refused, by reason. */
  stats() {
    return this.exchange.stats()
  }

  async close(): Promise<void> {
    this.files.attachNetwork(undefined)
    await this.exchange.close()
  }
}
