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

/**
 * What wire does for a joiner: sends each outgoing join or cancel to a peer holding the space
 * (`ingestJoin`, authenticated as the joiner) and reports its answer back. Returns the answers.
 */
export async function deliverJoins(joiner: Booted, holder: Booted, spaceId: string): Promise<Array<string | undefined>> {
  const answers: Array<string | undefined> = []
  for (const out of await joiner.engine.account().sharing.outgoingJoins()) {
    if (out.spaceId !== spaceId) continue
    const held = holder.engine.account().held(out.spaceId)
    const status = held ? await held.replica.ingestJoin(out.change, joiner.accountId) : undefined
    answers.push(status)
    if (held) await held.settled()
    if (status) await joiner.engine.account().sharing.joins.answered(out.spaceId, status)
  }
  return answers
}
