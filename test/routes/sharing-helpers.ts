import type { Booted } from './helpers.ts'

/**
 * Two accounts' daemons in one process exchange a space's changes directly through replica
 * ingest (what a head-sync round would carry), then let both settle: row moves, live feeds.
 */
export async function exchange(from: Booted, to: Booted, spaceId: string): Promise<void> {
  const src = from.engine.account().held(spaceId)
  const dst = to.engine.account().held(spaceId)
  if (!src || !dst) throw new Error(`space ${spaceId} not held on both sides`)
  const all = await src.replica.allChanges()
  await dst.replica.ingest(all.map(({ id, raw }) => ({ id, raw })), { origin: from.accountId })
  await dst.settled()
  await to.engine.account().sharing.settle(spaceId)
}

/** A peer of `from` offers `to` the space (what wire's `offered` reports), then one exchange. */
export async function offer(from: Booted, to: Booted, spaceId: string): Promise<void> {
  await to.engine.account().sharing.offered(spaceId, from.accountId)
  await exchange(from, to, spaceId)
}
