import { pushModule } from '../../../sync/modules/push/module.ts'
import { PushNodeClient } from '../../push/client.ts'
import { pushNodeOf } from '../../push/config.ts'
import { wireLink } from '../../push/link.ts'
import type { P2pProtocol } from './protocol.ts'

/**
 * The push client (docs/push.md): when the account runs the push module and a push node is
 * configured, the module's link dials it over this node. Without one, the module stays
 * unlinked and its routes answer 409 `push.disabled`.
 */
export const pushProtocol: P2pProtocol = {
  name: 'push',
  async start(ctx) {
    const push = ctx.account.services.find(pushModule)
    const target = ctx.push && pushNodeOf(ctx.push)
    if (!push || !target) return undefined
    const client = new PushNodeClient(ctx.node, target)
    push.attach(wireLink((bytes) => client.request(bytes), ctx.crypto))
    return { close: () => push.detach() }
  },
}
