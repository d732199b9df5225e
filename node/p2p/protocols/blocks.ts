import { filesModule } from '../../../sync/modules/files/module.ts'
import { FILES } from '../../../sync/modules/files/limits.ts'
import { BlockExchange } from '../../../sync/p2p/block-exchange.ts'
import type { DaemonService } from '../../daemon/service.ts'
import { HEAD_SYNC, protocolContext, type ProtocolComponents } from './protocol.ts'

/** Files' block exchange (sync/p2p/block-exchange.ts), when the files module runs for the account: the files service's block source. */
export const blocksProtocol = (): DaemonService<ProtocolComponents> => ({
  name: 'blocks',
  needs: [HEAD_SYNC],
  async start(c) {
    const files = c.account.services.find(filesModule)
    if (!files) return undefined
    const exchange = await BlockExchange.start({ ...protocolContext(c), store: files.store, blockTimeoutMs: FILES.blockTimeoutMs })
    files.attachNetwork(exchange)
    return {
      stop: async () => {
        files.attachNetwork(undefined)
        await exchange.close()
      },
    }
  },
})
