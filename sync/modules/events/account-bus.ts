import { SvcError } from '../../core/errors.ts'
import type { AccountEngine } from '../../space/account-engine.ts'
import type { SpaceReplica } from '../../replica/space-replica.ts'
import { EventBus } from './bus.ts'

/** Roles of full membership: guests (and pending or removed accounts) hold no network scope. */
const FULL: ReadonlySet<string> = new Set(['owner', 'admin', 'writer', 'reader'])

/** Whether `identity` is a full member of the replica's space now, and the space has a read key. */
export function isFullMember(replica: SpaceReplica, identity: string): boolean {
  const st = replica.acl.current()
  return st.readKeyId !== undefined && FULL.has(st.roleOf(identity))
}

const buses = new WeakMap<AccountEngine, EventBus>()

/**
 * The event bus of an account: one per booted account, made on first use. The HTTP routes and
 * the P2P side both reach it from the account they serve, so neither needs the other to exist
 * (device-scope events work with P2P off); it goes away with the account engine.
 */
export function eventBusOf(account: AccountEngine): EventBus {
  let bus = buses.get(account)
  if (!bus) {
    bus = new EventBus(
      {
        accountId: account.accountId,
        requireFullMember(spaceId) {
          const space = account.space(spaceId)
          if (!isFullMember(space.replica, account.accountId)) {
            throw new SvcError('events.no_read_key', 'network events need full membership of the space (guests and pending members have none)', { spaceId })
          }
        },
      },
      () => account.tech.env.now(),
    )
    buses.set(account, bus)
  }
  return bus
}
