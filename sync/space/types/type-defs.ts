import { SvcError } from '../../core/errors.ts'
import type { Json, JsonObject } from '../../crdt/ops.ts'
import type { Doc } from '../rows.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { asStringArray } from '../rows.ts'
import { BUILTIN_TYPE_INFOS, builtinType, frozen, isBuiltinType } from './builtins.ts'
import { invalidField, isObj, XKEY_RE, type TypeInfo } from './model.ts'

/** Row namespace holding a user type's definition fields. */
export const TYPE_NS = 'type'

export interface TypeCreateBody {
  xKey?: unknown
  name?: unknown
  description?: unknown
  iconCid?: unknown
  weight?: unknown
  layout?: unknown
  hidden?: unknown
  meta?: unknown
}

export type TypePatchBody = Omit<TypeCreateBody, 'xKey'>

/** The row of a live user type (an object carrying the `type` built-in), if `typeId` is one. */
export function userTypeRow(engine: SpaceEngine, typeId: string): Doc | undefined {
  if (isBuiltinType(typeId)) return undefined
  const row = engine.objectDoc(typeId)
  return row && asStringArray((row.core as JsonObject | undefined)?.types).includes('type') ? row : undefined
}

function infoOf(row: Doc): TypeInfo {
  const t = isObj(row[TYPE_NS]) ? row[TYPE_NS] : {}
  const s = (v: Json | undefined) => (typeof v === 'string' ? v : '')
  return {
    id: row.id,
    name: s(t.name),
    description: s(t.description),
    iconCid: s(t.iconCid),
    xKey: s(t.xKey),
    weight: typeof t.weight === 'number' ? t.weight : 0,
    layout: s(t.layout),
    hidden: t.hidden === true,
    meta: isObj(t.meta) ? t.meta : {},
  }
}

/** User types in creation order (created instant, then id). */
function userTypes(engine: SpaceEngine): TypeInfo[] {
  const rows: Doc[] = []
  // Every write to a declared dataset asks for the types: read them off the core.types index
  // rather than every object row (a scan made /modify ~9x slower on a 100k-object space).
  const carriers = (engine.objectSource().lookup('core.types', 'type')?.values() as Iterable<Doc> | undefined) ?? engine.objectDocs()
  for (const row of carriers) if (asStringArray((row.core as JsonObject | undefined)?.types).includes('type') && !isBuiltinType(row.id)) rows.push(row)
  const created = (r: Doc) => String(((r.createdAt as JsonObject | undefined)?.$date as string | undefined) ?? '')
  rows.sort((a, b) => (created(a) < created(b) ? -1 : created(a) > created(b) ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return rows.map(infoOf)
}

/** `GET {S}/types`: built-ins in the spec's order, then user types; hidden ones only on request. */
export function listTypes(engine: SpaceEngine, opts: { includeHidden?: boolean } = {}): TypeInfo[] {
  const all = [...BUILTIN_TYPE_INFOS, ...userTypes(engine)]
  return opts.includeHidden ? all.map((t) => ({ ...t })) : all.filter((t) => !t.hidden).map((t) => ({ ...t }))
}

/** `GET {T}`: 404 `type.not_found`. */
export function getType(engine: SpaceEngine, typeId: string): TypeInfo {
  const b = builtinType(typeId)
  if (b) return { ...b }
  const row = userTypeRow(engine, typeId)
  if (!row) throw new SvcError('type.not_found', 'type not found', { typeId })
  return infoOf(row)
}

/** A user type whose definitions may change: 404 for unknown ids, 400 `type.registered` for built-ins. */
export function requireUserType(engine: SpaceEngine, typeId: string): TypeInfo {
  if (isBuiltinType(typeId)) throw frozen(typeId)
  return getType(engine, typeId)
}

/** Type-level fields shared by create and patch, checked and turned into row values. */
function typeFields(body: TypePatchBody): Record<string, Json> {
  const out: Record<string, Json> = {}
  for (const k of ['name', 'description', 'iconCid', 'layout'] as const) {
    const v = body[k]
    if (v === undefined) continue
    if (typeof v !== 'string') throw invalidField(k, `${k} must be a string`)
    out[k] = v
  }
  if (body.weight !== undefined) {
    if (typeof body.weight !== 'number' || !Number.isFinite(body.weight)) throw invalidField('weight', 'weight must be a number')
    out.weight = body.weight
  }
  if (body.hidden !== undefined) {
    if (typeof body.hidden !== 'boolean') throw invalidField('hidden', 'hidden must be a boolean')
    out.hidden = body.hidden
  }
  return out
}

function metaEntries(meta: unknown): Array<[string, Json]> {
  if (meta === undefined) return []
  if (!isObj(meta)) throw invalidField('meta', 'meta must be an object of key to value (null unsets a key)')
  for (const k of Object.keys(meta)) if (k === '' || k.includes('.') || k.startsWith('$') || k === '__proto__') throw invalidField(`meta.${k}`, 'bad meta key')
  return Object.entries(meta)
}

/**
 * `POST {S}/types`. xKey is required (400 `type.xkey_required`) and unique among every type's
 * xKey and id, hidden and built-in ones included (409 `type.xkey_conflict`,
 * `details.xKey`, `details.existingTypeId`). Call under the service's mutex.
 */
export async function createType(engine: SpaceEngine, body: TypeCreateBody): Promise<TypeInfo> {
  const def = checkTypeCreate(engine, body)
  const id = await engine.createObjectRow({ types: ['type'], initialProperties: { [TYPE_NS]: def } })
  return getType(engine, id)
}

/**
 * The checks of `createType` without the write (bundles declare a type on their root object):
 * returns the definition to store under the `type` namespace. `tolerate` exempts types from
 * the xKey check (a bundle's own roots hold its xKey).
 */
export function checkTypeCreate(engine: SpaceEngine, body: TypeCreateBody, tolerate: (typeId: string) => boolean = () => false): JsonObject {
  if (body.xKey === undefined || body.xKey === null || body.xKey === '') throw new SvcError('type.xkey_required', 'xKey is required')
  if (typeof body.xKey !== 'string' || !XKEY_RE.test(body.xKey)) throw invalidField('xKey', 'xKey must be a short code handle ([A-Za-z0-9_.:/@+-], up to 128 chars)')
  const xKey = body.xKey
  const fields = typeFields(body)
  const meta = metaEntries(body.meta).filter(([, v]) => v !== null)
  const clash = listTypes(engine, { includeHidden: true }).find((t) => (t.xKey === xKey || t.id === xKey) && !tolerate(t.id))
  if (clash) throw new SvcError('type.xkey_conflict', 'a type already uses this xKey', { xKey, existingTypeId: clash.id })
  const def: JsonObject = { ...fields, xKey }
  if (meta.length) def.meta = Object.fromEntries(meta)
  return def
}

/** `PATCH {T}`: absent keeps; `meta` is per key, null unsets a key. 400 `type.registered` on built-ins. */
export async function patchType(engine: SpaceEngine, typeId: string, body: TypePatchBody): Promise<void> {
  if (!isObj(body)) throw invalidField('', 'body must be an object')
  requireUserType(engine, typeId)
  if ('xKey' in body) throw invalidField('xKey', 'xKey is set at creation')
  const values: Record<string, Json> = typeFields(body)
  for (const [k, v] of metaEntries(body.meta)) values[`meta.${k}`] = v
  if (Object.keys(values).length === 0) throw new SvcError('request.missing_field', 'give at least one field to change')
  await engine.setRowValues(typeId, TYPE_NS, values)
}

/** `DELETE {T}`: 501 (spec). */
export function deleteType(_engine: SpaceEngine, typeId: string): never {
  throw new SvcError('sdk.not_implemented', 'deleting a type is not implemented', { typeId })
}

/** Attaching or detaching a type after creation: 501 (spec "Object row"). */
export function attachOrDetachType(_engine: SpaceEngine, objectId: string, typeId: string): never {
  throw new SvcError('sdk.not_implemented', 'attaching or detaching a type after creation is not implemented', { objectId, typeId })
}
