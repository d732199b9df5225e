import type { AccountEngine } from '../sync/space/account-engine.ts'
import { pushAll } from './helpers.ts'

/**
 * What the wire does between two accounts' devices for one space, by direct ingest: a side that
 * does not hold the space is offered it (its account engine decides whether to open it), then
 * both exchange every change of it and let what follows (row transitions) finish.
 */
export async function exchange(a: AccountEngine, b: AccountEngine, spaceId: string) {
  for (const [x, y] of [
    [a, b],
    [b, a],
  ] as const) {
    if (!y.held(spaceId) && x.held(spaceId)) await y.oneToOne.offered(spaceId, x.accountId)
  }
  const ra = a.held(spaceId)?.replica
  const rb = b.held(spaceId)?.replica
  if (!ra || !rb) return
  await pushAll(ra, rb)
  await pushAll(rb, ra)
  await a.held(spaceId)!.settled()
  await b.held(spaceId)!.settled()
  await settle(a)
  await settle(b)
}

/** Lets queued row transitions (the one-to-one queue, the account's row following) finish. */
export async function settle(x: AccountEngine) {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 5))
    await x.tech.settled()
  }
}

/** Two devices of one account: their tech spaces, and one space both hold, exchange everything. */
export async function ownDevices(d1: AccountEngine, d2: AccountEngine, spaceId?: string) {
  await pushAll(d1.tech.replica, d2.tech.replica)
  await pushAll(d2.tech.replica, d1.tech.replica)
  await settle(d1)
  await settle(d2)
  if (spaceId && d1.held(spaceId) && d2.held(spaceId)) {
    await pushAll(d1.held(spaceId)!.replica, d2.held(spaceId)!.replica)
    await pushAll(d2.held(spaceId)!.replica, d1.held(spaceId)!.replica)
    await settle(d1)
    await settle(d2)
  }
}
