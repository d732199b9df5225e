import { eventsModule } from '../../../sync/modules/events/module.ts'
import { EventsNetwork } from '../events-network.ts'
import type { P2pProtocol } from './protocol.ts'

/** Network-scope events of the event bus, when its module runs for the account. */
export const eventsProtocol: P2pProtocol = {
  name: 'events',
  async start(ctx) {
    const bus = ctx.account.services.find(eventsModule)
    if (!bus) return undefined
    const events = await EventsNetwork.start({ ...ctx, bus })
    return { close: () => void events.close() }
  },
}
