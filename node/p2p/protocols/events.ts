import { eventsModule } from '../../../sync/modules/events/module.ts'
import type { DaemonService } from '../../daemon/service.ts'
import { EventsNetwork } from '../events-network.ts'
import { HEAD_SYNC, protocolContext, type ProtocolComponents } from './protocol.ts'

/** Network-scope events of the event bus, when its module runs for the account. */
export const eventsProtocol = (): DaemonService<ProtocolComponents> => ({
  name: 'events',
  needs: [HEAD_SYNC],
  async start(c) {
    const bus = c.account.services.find(eventsModule)
    if (!bus) return undefined
    const events = await EventsNetwork.start({ ...protocolContext(c), bus })
    return { stop: () => events.close() }
  },
})
