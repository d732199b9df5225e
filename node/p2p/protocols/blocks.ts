import { filesModule } from '../../../sync/modules/files/module.ts'
import { BlockExchange } from '../../files/block-exchange.ts'
import type { P2pProtocol } from './protocol.ts'

/** Files' block exchange, when the files module runs for the account. */
export const blocksProtocol: P2pProtocol = {
  name: 'blocks',
  async start(ctx) {
    const files = ctx.account.services.find(filesModule)
    if (!files) return undefined
    const exchange = await BlockExchange.start({ ...ctx, files })
    return { close: () => exchange.close() }
  },
}
