import type { JsonObject } from '../../crdt/ops.ts'
import type { MaterializedRecord } from '../../replica/space-replica.ts'
import { compareUtf8 } from '../../core/utf8-order.ts'
import { isJsonObject } from '../rows.ts'
import { BUNDLES_DS } from '../schema.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { bundleRootId, type Bundle, type Claim } from './model.ts'

/**
 * The bundle registry: records of the space-index object's `bundles` dataset, record id = the
 * bundle id. A record holds `name` and `claims.<rootId>` = `{derived, typeId?, installedAt,
 * installedBy}`. Every write is a single path (never the whole record), so claims made on two
 * devices at once both survive merge, and the winner is elected from the merged claims
 * by the same rule on every replica (see `elect`).
 */

export interface RegistryEntry {
  id: string
  name: string
  claims: Claim[]
}

function claimOf(rootId: string, v: unknown): Claim | undefined {
  if (!isJsonObject(v)) return undefined
  const at = isJsonObject(v.installedAt) && typeof v.installedAt.$date === 'string' ? { $date: v.installedAt.$date } : { $date: new Date(0).toISOString() }
  const c: Claim = { rootId, derived: v.derived === true, installedAt: at, installedBy: typeof v.installedBy === 'string' ? v.installedBy : '' }
  if (typeof v.typeId === 'string') c.typeId = v.typeId
  return c
}

function entryOf(rec: MaterializedRecord): RegistryEntry | undefined {
  if (rec.deleted || !isJsonObject(rec.value)) return undefined
  const v = rec.value
  const claims: Claim[] = []
  if (isJsonObject(v.claims)) {
    for (const [rootId, c] of Object.entries(v.claims)) {
      // A key with a dot cannot be addressed as `claims.<rootId>` (nor is it an object id).
      if (rootId.includes('.')) continue
      const claim = claimOf(rootId, c)
      if (claim) claims.push(claim)
    }
  }
  return { id: rec.id, name: typeof v.name === 'string' ? v.name : '', claims }
}

export async function readEntry(engine: SpaceEngine, bundleId: string): Promise<RegistryEntry | undefined> {
  const rec = await engine.replica.getRecord(engine.spaceIndexObjectId, BUNDLES_DS, bundleId)
  return rec ? entryOf(rec) : undefined
}

export async function readEntries(engine: SpaceEngine): Promise<RegistryEntry[]> {
  const out: RegistryEntry[] = []
  for (const rec of await engine.replica.listRecords(engine.spaceIndexObjectId, BUNDLES_DS)) {
    const e = entryOf(rec)
    if (e) out.push(e)
  }
  return out.sort((a, b) => compareUtf8(a.id, b.id))
}

export interface Election {
  winner: Claim
  losers: Claim[]
}

/**
 * The conflict rule, a pure function of the merged record (plus which roots are known
 * deleted): a claim is derived exactly when its root is the bundle's derived root (the
 * stored flag is not trusted); claims whose root was deleted drop out; the derived claim
 * wins; otherwise the earliest `installedAt`, then the smaller root id, wins. Every other
 * live claim is a loser. Undefined when no live claim is left (the bundle is not installed).
 */
export function elect(engine: SpaceEngine, entry: RegistryEntry): Election | undefined {
  const derivedId = bundleRootId(engine.spaceId, entry.id)
  const live = entry.claims.filter((c) => !engine.replica.treeMeta(c.rootId)?.deleted).map((c) => ({ ...c, derived: c.rootId === derivedId }))
  if (live.length === 0) return undefined
  live.sort((a, b) => Number(b.derived) - Number(a.derived) || compareUtf8(a.installedAt.$date, b.installedAt.$date) || compareUtf8(a.rootId, b.rootId))
  return { winner: live[0], losers: live.slice(1) }
}

/** The root's row has arrived on this replica (its tree may exist without it). */
export const rootPresent = (engine: SpaceEngine, rootId: string) => engine.objectDoc(rootId) !== undefined

export function bundleOf(engine: SpaceEngine, entry: RegistryEntry, election: Election): Bundle {
  const { winner } = election
  const b: Bundle = {
    id: entry.id,
    name: entry.name,
    rootId: winner.rootId,
    derived: winner.derived,
    losers: election.losers.map((c) => c.rootId),
    ready: rootPresent(engine, winner.rootId),
    installedAt: winner.installedAt,
    installedBy: winner.installedBy,
  }
  if (winner.typeId !== undefined) b.typeId = winner.typeId
  return b
}

/** Claims `claim.rootId` for the bundle (one change on the space index). */
export async function writeClaim(engine: SpaceEngine, bundleId: string, name: string | undefined, claim: Claim): Promise<void> {
  const value: JsonObject = { derived: claim.derived, installedAt: claim.installedAt, installedBy: claim.installedBy }
  if (claim.typeId !== undefined) value.typeId = claim.typeId
  await engine.write(engine.spaceIndexObjectId, [
    ...(name !== undefined ? [{ op: 'set' as const, ds: BUNDLES_DS, id: bundleId, path: 'name', value: name }] : []),
    { op: 'set', ds: BUNDLES_DS, id: bundleId, path: `claims.${claim.rootId}`, value },
  ])
}

/** Drops one root's claim: the root stops being part of the bundle. */
export async function dropClaim(engine: SpaceEngine, bundleId: string, rootId: string): Promise<void> {
  await engine.write(engine.spaceIndexObjectId, [{ op: 'unset', ds: BUNDLES_DS, id: bundleId, path: `claims.${rootId}` }])
}
