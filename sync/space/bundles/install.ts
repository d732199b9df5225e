import { SvcError } from '../../core/errors.ts'
import type { Json, Op } from '../../crdt/ops.ts'
import { ROW_DS, ROW_ID } from '../schema.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { createPart, listParts } from '../types/parts.ts'
import { createProperty, listProperties } from '../types/property-defs.ts'
import { TYPE_NS, userTypeRow } from '../types/type-defs.ts'
import { isObj, type TypesService } from '../types/index.ts'
import { BUNDLE_MARK, bundleRootId, bundleRootSeed, checkBundleId, type BundleRequest, type Claim, type InstallOptions, type InstallResult } from './model.ts'
import { bundleOf, elect, readEntry, rootPresent, writeClaim } from './registry.ts'
import { checkRequest, type CheckedRequest } from './request.ts'

/** Type id the drafts of a created root are checked against before the root exists. */
const PENDING_TYPE_ID = 'pending'

export const notReady = (id: string, rootId: string) =>
  new SvcError('bundle.not_ready', "the registry names this bundle's root but the root has not arrived on this replica yet; retry after sync", { id, rootId })

/**
 * `POST {S}/bundles`: adopt-or-install. Call under the types service's lock.
 * - `derived: true`: the root is the derived object of (space, bundle id). If its claim is in
 *   the registry the bundle is adopted (409 `bundle.not_ready` while the root's row has not
 *   arrived); otherwise it is installed, or repaired when the root arrived without its claim
 *   (`installed: false`, only missing properties and parts are added). A created root already
 *   claimed for the id becomes a loser: the derived root wins on every replica.
 * - `derived` false or absent: any live claim is adopted (409 `bundle.not_ready` as above);
 *   otherwise an ordinary object is created as the root and claimed.
 * The request is checked in full first; nothing is written when a check fails.
 */
export async function adoptOrInstall(svc: TypesService, req: BundleRequest, opts: InstallOptions): Promise<InstallResult> {
  const engine = svc.engine
  if (!isObj(req)) throw new SvcError('request.invalid_field', 'body must be an object', { field: '' })
  await engine.settled()
  const id = checkBundleId(req.id)
  const derivedId = bundleRootId(engine.spaceId, id)
  const entry = await readEntry(engine, id)
  const election = entry && elect(engine, entry)
  const claimed = new Set(entry?.claims.map((c) => c.rootId) ?? [])
  const adopt = req.derived === true ? election?.winner.derived === true : election !== undefined
  const derived = req.derived === true
  // A bundle's own roots may hold its xKey; adopting writes no type at all.
  const tolerate = adopt ? () => true : (t: string) => t === derivedId || claimed.has(t)
  const checked = await checkRequest(svc, req, opts, { typeId: derived ? derivedId : PENDING_TYPE_ID, tolerate })

  if (adopt) {
    const bundle = bundleOf(engine, entry!, election!)
    if (!bundle.ready) throw notReady(id, bundle.rootId)
    return { bundle, installed: false }
  }

  let rootId: string
  let installed = true
  if (derived) {
    installed = !rootPresent(engine, derivedId)
    rootId = await engine.createTree({ seed: bundleRootSeed(id) })
  } else {
    rootId = await engine.createTree()
  }
  if (installed) await writeRoot(engine, rootId, checked, opts)
  // Account/local-scope values live in the scoped store, like a typed set's (values.ts).
  if (installed) for (const [group, values] of Object.entries(checked.rootScoped)) await svc.setValues(rootId, group, values)
  const isType = checked.type !== undefined && userTypeRow(engine, rootId) !== undefined
  if (isType) await addDefinitions(engine, rootId, checked, installed)

  const claim: Claim = {
    rootId,
    derived,
    installedAt: (engine.objectDoc(rootId)?.createdAt as { $date: string } | undefined) ?? { $date: new Date(0).toISOString() },
    installedBy: engine.replica.me,
  }
  if (isType) claim.typeId = rootId
  await writeClaim(engine, id, checked.name, claim)
  const after = await readEntry(engine, id)
  return { bundle: bundleOf(engine, after!, elect(engine, after!)!), installed }
}

/** The root's row in one change: carried types, the declared type's definition, values, the bundle mark. */
async function writeRoot(engine: SpaceEngine, rootId: string, checked: CheckedRequest, opts: InstallOptions): Promise<void> {
  const types = [...(checked.type ? ['type'] : []), ...checked.rootTypes, ...(checked.type && opts.rootCarriesOwnType ? [rootId] : [])]
  const set = (path: string, value: Json): Op => ({ op: 'set', ds: ROW_DS, id: ROW_ID, path, value })
  const ops: Op[] = [set('core.types', [...new Set(types)])]
  if (checked.type) for (const [k, v] of Object.entries(checked.type)) ops.push(set(`${TYPE_NS}.${k}`, v))
  if (checked.name !== undefined && checked.rootValues.core?.name === undefined) ops.push(set('core.name', checked.name))
  for (const [group, values] of Object.entries(checked.rootValues)) for (const [prop, v] of Object.entries(values)) ops.push(set(`${group}.${prop}`, v))
  ops.push(set(`${BUNDLE_MARK}.id`, checked.id))
  await engine.write(rootId, ops)
}

/**
 * The declared properties and parts, one change each (their ids derive from it). On a repair
 * only what is missing is added: properties by xKey, parts by key.
 */
async function addDefinitions(engine: SpaceEngine, rootId: string, checked: CheckedRequest, fresh: boolean): Promise<void> {
  const haveProps = fresh ? [] : await listProperties(engine, rootId)
  for (const p of checked.properties) {
    if (!fresh && (typeof p.xKey !== 'string' || haveProps.some((h) => h.xKey === p.xKey))) continue
    await createProperty(engine, rootId, p)
  }
  const haveParts = fresh ? [] : await listParts(engine, rootId)
  for (const p of checked.parts) {
    if (haveParts.some((h) => h.key === p.key)) continue
    await createPart(engine, rootId, p)
  }
}
