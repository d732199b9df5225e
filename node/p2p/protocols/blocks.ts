import { filesModule } from '../../../sync/modules/files/module.ts'
import type { DaemonService } from '../../daemon/service.ts'
import { BlockExchange } from '../../files/block-exchange.ts'
import { HEAD_SYNC, protocolContext, type ProtocolComponents } from './protocol.ts'

/** Files' block exchange, when the files module runs for the account. */
export const blocksProtocol = (): DaemonService<ProtocolComponents> => ({
  name: 'blocks',
  needs: [HEAD_SYNC],
  async start(c) {
    const files = c.account.services.find(filesModule)
    if (!files) return undefined
    const exchange = await BlockExchange.start({ ...protocolContext(c), files })
    return { stop: () => exchange.close() }
  },
})
