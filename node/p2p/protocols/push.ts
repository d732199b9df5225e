import { pushModule } from '../../../sync/modules/push/module.ts'
import type { DaemonService } from '../../daemon/service.ts'
import { PushNodeClient } from '../../push/client.ts'
import { pushNodeOf, type PushConfig } from '../../push/config.ts'
import { wireLink } from '../../push/link.ts'
import { HEAD_SYNC, type ProtocolComponents } from './protocol.ts'

/**
 * The push client (docs/push.md): when the account runs the push module and a push node is
 * configured (`svc serve` config key `push`), the module's link dials it over this node.
 * Without one, the module stays unlinked and its routes answer 409 `push.disabled`.
 */
export const pushProtocol = (config: PushConfig | undefined): DaemonService<Pick<ProtocolComponents, 'account' | 'node' | 'crypto' | 'log'>> => ({
  name: 'push',
  needs: [HEAD_SYNC],
  async start(c) {
    const push = c.account.services.find(pushModule)
    const target = config && pushNodeOf(config)
    if (!push || !target) return undefined
    const client = new PushNodeClient(c.node, target, c.log)
    push.attach(wireLink((bytes) => client.request(bytes), c.crypto))
    return { stop: () => push.detach() }
  },
})
