import { identityOf } from '../../sync/crypto/keys.ts'
import type { BaseComponents, DaemonService, ProvidedComponents } from '../daemon/service.ts'
import { HEAD_SYNC } from '../p2p/protocols/protocol.ts'
import { AgentsHost, type AgentsOptions } from './host.ts'
import { linkedAccountDevices } from './live-devices.ts'

/**
 * The agents (docs/agents.md) as a daemon service: the election, the trigger scheduler and the
 * program runner of this device. With head sync running, the devices of the account linked to
 * this one count as live in the election; without it only this device's own claim does.
 */
export const agentsService = (init: AgentsOptions): DaemonService<Pick<BaseComponents, 'account' | 'env' | 'keys' | 'log'> & Partial<Pick<ProvidedComponents, 'p2p'>>> => ({
  name: 'agents',
  after: [HEAD_SYNC],
  async start(c) {
    const liveDevices = c.p2p && linkedAccountDevices(c.p2p, c.account.accountId)
    const agents = new AgentsHost(c.account, c.env, identityOf(c.keys.device.publicKey), { log: c.log, ...init, liveDevices })
    await agents.start()
    return { provides: { agents }, stop: () => agents.stop() }
  },
})
