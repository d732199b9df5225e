import { SvcError } from '../../core/errors.ts'
import type { Json, JsonObject } from '../../crdt/ops.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { assertKeysFree, type DeclRecord } from '../types/dataset-decls.ts'
import { checkPartCreate } from '../types/parts.ts'
import type { ModuleSet } from '../module.ts'
import { checkPropertyCreate } from '../types/property-defs.ts'
import { checkTypeCreate } from '../types/type-defs.ts'
import { splitValues } from '../types/values.ts'
import { isObj, type PartCreateBody, type PropertyCreateBody, type TypesService } from '../types/index.ts'
import { checkBundleId, isSystemBundle, type BundleRequest, type InstallOptions } from './model.ts'
import { refuseReservedCarriers } from '../types/reserved-carrier.ts'

/**
 * Checks a bundle request completely before anything is written, reusing the types
 * service's own rules (so a failed install leaves nothing half made). Order of errors:
 * id (400 `request.invalid_field`), 409 `bundle.reserved`, rootTypes (`type.not_found`,
 * `type.reserved_carrier`), rootProperties (`property.not_found`,
 * `property.format_violation` ...), the declared type (`type.xkey_required`, field errors,
 * 409 `type.xkey_conflict` unless `ctx.tolerate` exempts the holder), its properties
 * (`property.format_invalid` ..., 409 `property.xkey_conflict` for an xKey given twice) and
 * parts (`dataset.*`, 409 `dataset.key_conflict` for a key given twice). `ctx.typeId` names
 * the type the drafts are checked for (a placeholder when the root id is not known yet).
 */
export interface CheckedRequest {
  id: string
  name?: string
  derived: boolean
  rootTypes: string[]
  /** Values to write on the root, by type key; values of removed properties already dropped. */
  rootValues: Record<string, Record<string, Json>>
  /** Account- and local-scope root values: they go to the scoped store, never the synced row. */
  rootScoped: Record<string, Record<string, Json>>
  /** The definition of the type declared on the root, when the request declares one. */
  type?: JsonObject
  properties: PropertyCreateBody[]
  parts: PartCreateBody[]
}

const TYPE_FIELDS = ['xKey', 'properties', 'parts', 'layout', 'weight', 'hidden'] as const

const invalid = (field: string, message: string) => new SvcError('request.invalid_field', message, { field })

export async function checkRequest(
  svc: TypesService,
  req: BundleRequest,
  opts: InstallOptions,
  ctx: { typeId: string; tolerate: (typeId: string) => boolean },
): Promise<CheckedRequest> {
  const engine = svc.engine
  if (!isObj(req)) throw invalid('', 'body must be an object')
  const id = checkBundleId(req.id)
  if (isSystemBundle(id) && !opts.system) throw new SvcError('bundle.reserved', 'bundle ids starting system: are reserved for the catalog', { id })
  if (req.name !== undefined && typeof req.name !== 'string') throw invalid('name', 'name must be a string')
  if (req.derived !== undefined && typeof req.derived !== 'boolean') throw invalid('derived', 'derived must be a boolean')

  const rootTypes = await checkRootTypes(engine, req.rootTypes)
  const { synced: rootValues, scoped: rootScoped } = await checkRootValues(svc, req.rootProperties, rootTypes)

  const out: CheckedRequest = { id, derived: req.derived === true, rootTypes, rootValues, rootScoped, properties: [], parts: [] }
  if (req.name !== undefined) out.name = req.name
  if (TYPE_FIELDS.some((k) => req[k] !== undefined)) {
    out.type = checkType(engine, req, ctx.tolerate)
    out.properties = checkProperties(req.properties, ctx.typeId)
    out.parts = checkParts(req.parts, ctx.typeId, engine.modules)
  }
  return out
}

async function checkRootTypes(engine: SpaceEngine, types: unknown): Promise<string[]> {
  if (types === undefined) return []
  if (!Array.isArray(types) || !types.every((t) => typeof t === 'string')) throw invalid('rootTypes', 'rootTypes is an array of type ids')
  const out = [...new Set(types)]
  for (const t of out) {
    if (t === 'type') throw invalid('rootTypes', 'declare a type on the root with xKey instead of carrying type')
    if (!engine.typeExists(t)) throw new SvcError('type.not_found', 'unknown type in rootTypes', { typeId: t, field: 'rootTypes' })
  }
  await refuseReservedCarriers(engine, out, 'rootTypes')
  return out
}

type Groups = Record<string, Record<string, Json>>

async function checkRootValues(svc: TypesService, groups: unknown, rootTypes: string[]): Promise<{ synced: Groups; scoped: Groups }> {
  const out: Groups = {}
  const scopedOut: Groups = {}
  if (groups === undefined) return { synced: out, scoped: scopedOut }
  if (!isObj(groups)) throw invalid('rootProperties', 'rootProperties groups values by type key')
  for (const [group, values] of Object.entries(groups)) {
    if (group !== 'core' && !rootTypes.includes(group)) throw invalid(`rootProperties.${group}`, 'rootProperties groups are core or a type of rootTypes')
    if (!isObj(values)) throw invalid(`rootProperties.${group}`, 'a group is an object of propId to value')
    const { synced, scoped } = await splitValues(svc.engine, group, values)
    out[group] = synced
    if (Object.keys(scoped).length) scopedOut[group] = scoped
  }
  return { synced: out, scoped: scopedOut }
}

function checkType(engine: SpaceEngine, req: BundleRequest, tolerate: (typeId: string) => boolean): JsonObject {
  return checkTypeCreate(engine, { xKey: req.xKey, name: req.name, layout: req.layout, weight: req.weight, hidden: req.hidden }, tolerate)
}

function checkProperties(list: unknown, typeId: string): PropertyCreateBody[] {
  if (list === undefined) return []
  if (!Array.isArray(list)) throw invalid('properties', 'properties is an array of property definitions')
  const xKeys = new Set<string>()
  return list.map((p: PropertyCreateBody) => {
    const rec = checkPropertyCreate(p, typeId)
    if (typeof rec.xKey === 'string') {
      if (xKeys.has(rec.xKey)) throw new SvcError('property.xkey_conflict', 'two properties of the bundle use this xKey', { xKey: rec.xKey })
      xKeys.add(rec.xKey)
    }
    return p
  })
}

function checkParts(list: unknown, typeId: string, modules: ModuleSet): PartCreateBody[] {
  if (list === undefined) return []
  if (!Array.isArray(list)) throw invalid('parts', 'parts is an array of part definitions')
  const keys = new Set<string>()
  const drafts: DeclRecord[] = []
  for (const p of list as PartCreateBody[]) {
    const { key, drafts: ds } = checkPartCreate(p, typeId, modules)
    if (keys.has(key)) throw new SvcError('dataset.key_conflict', `part key ${key} is given twice`, { key })
    keys.add(key)
    drafts.push(...ds)
  }
  assertKeysFree([], drafts)
  return list as PartCreateBody[]
}
