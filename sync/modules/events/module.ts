import { SvcError } from '../../core/errors.ts'
import { isFullMember } from '../../replica/full-membership.ts'
import { defineModule, type AccountModuleContext } from '../../space/module.ts'
import { EventBus, type BusAccess } from './bus.ts'
import { EVENTS_ERROR_CODES } from './errors.ts'

/**
 * The event bus as a module: it declares no dataset (nothing of the bus is stored) and no
 * per-space service; the bus is its account service, one per account, reached as
 * `account.services.of(eventsModule)` by its routes (server/modules/events.ts) and by the P2P
 * side (node/p2p/events-network.ts), so neither needs the other to exist (device-scope events
 * work with P2P off). It closes with the account.
 */
export const eventsModule = defineModule({
  name: 'events',
  errorCodes: EVENTS_ERROR_CODES,
  accountService: (account) => new EventBus(busAccess(account), () => account.env.now(), account.log.child('events')),
})

/** What the bus asks of the account: space events need this account's full membership. */
function busAccess(account: AccountModuleContext): BusAccess {
  return {
    accountId: account.accountId,
    requireFullMember(spaceId) {
      const space = account.space(spaceId)
      if (!isFullMember(space.replica, account.accountId)) {
        throw new SvcError('events.no_read_key', 'network events need full membership of the space (guests and pending members have none)', { spaceId })
      }
    },
  }
}
