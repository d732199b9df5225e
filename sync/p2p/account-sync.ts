import type { SyncHost } from '../protocol/session.ts'
import type { SyncStack } from '../protocol/sync-stack.ts'
import type { AccountEngine } from '../space/account-engine.ts'

/**
 * The spaces an account's sync stack serves, as the daemon and a page both serve them: every
 * space the account holds, and for another device of the same account a space this one has not
 * opened yet (that is how a second device receives everything). Other accounts reach only held
 * spaces, whose ACL then decides.
 */
export function accountSyncHost(account: AccountEngine, onAdoptFailed: (spaceId: string, err: unknown) => void): SyncHost {
  return {
    // A space closed under the memory budget opens for the sync that needs it.
    space: (spaceId) => account.held(spaceId)?.replica ?? (account.isClosed(spaceId) ? account.opened(spaceId).then((e) => e?.replica) : undefined),
    accept: async (spaceId, identity) => {
      if (identity !== account.accountId) return undefined
      try {
        return (await account.adopt(spaceId)).replica
      } catch (err) {
        onAdoptFailed(spaceId, err)
        return undefined
      }
    },
  }
}

/** Rounds follow every open space of the account, and the spaces it opens later; returns the unsubscribe. */
export function followAccountSpaces(stack: SyncStack, account: AccountEngine): () => void {
  for (const s of account.openSpaces()) stack.watch(s.spaceId, s.replica)
  const offOpened = account.events.on('spacesOpened', ({ spaceIds }) => {
    for (const id of spaceIds) {
      const s = account.held(id)
      if (s) stack.watch(id, s.replica)
    }
    stack.spacesAdded(spaceIds)
  })
  // A space closed under the memory budget is not followed; a peer's step about it reopens it (accountSyncHost).
  const offClosed = account.events.on('spacesClosed', ({ spaceIds }) => {
    for (const id of spaceIds) stack.unwatch(id)
  })
  return () => {
    offOpened()
    offClosed()
  }
}
