import { SvcError } from '../../core/errors.ts'
import { CHANGE_DERIVED_ID, type Json, type JsonObject, type Op } from '../../crdt/ops.ts'
import type { MaterializedRecord } from '../../replica/space-replica.ts'
import { PROPERTIES_DS } from '../schema.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { builtinProperties, isBuiltinType } from './builtins.ts'
import { checkEntryKey, checkSlug, checkXFormat, defaultSlug } from './formats.ts'
import { invalidField, isObj, PROPERTY_KINDS, PROPERTY_SCOPES, readSetUnset, XKEY_RE, type PropertyDef, type PropertyKind, type PropertyScope } from './model.ts'
import { checkSetEntry, classifyPropertyPath } from './property-patch.ts'
import { getType, requireUserType } from './type-defs.ts'

/**
 * Property definitions: records of the type object's `properties` dataset. Created with the
 * record id CHANGE_DERIVED_ID in one change, so the propId is base58(xxh3-64(creating
 * changeId)) on every peer. Removal is a record tombstone: merge drops every later write to it.
 */

export interface PropertyCreateBody {
  name?: unknown
  kind?: unknown
  scope?: unknown
  xKey?: unknown
  description?: unknown
  xFormat?: unknown
  /** Shorthand for `xFormat.type`. */
  format?: unknown
  meta?: unknown
  /** Nested shapes (pinned): `items` `{kind}` for arrays, `properties` `{name: {kind}}` for objects. */
  items?: unknown
  properties?: unknown
}

export function propertyOf(typeId: string, rec: MaterializedRecord): PropertyDef {
  const v = (rec.value ?? {}) as JsonObject
  const def: PropertyDef = {
    id: rec.id,
    typeId,
    kind: (PROPERTY_KINDS as readonly string[]).includes(v.kind as string) ? (v.kind as PropertyKind) : 'string',
    scope: (PROPERTY_SCOPES as readonly string[]).includes(v.scope as string) ? (v.scope as PropertyScope) : 'synced',
    name: typeof v.name === 'string' ? v.name : '',
    description: typeof v.description === 'string' ? v.description : '',
    meta: isObj(v.meta) ? v.meta : {},
    xFormat: isObj(v.xFormat) ? v.xFormat : {},
  }
  if (typeof v.xKey === 'string') def.xKey = v.xKey
  if (isObj(v.items)) def.items = v.items
  if (isObj(v.properties)) def.properties = v.properties
  return def
}

/** Live definitions of a user type in creation order (`_ver.id`). */
async function userProperties(engine: SpaceEngine, typeId: string): Promise<PropertyDef[]> {
  const recs = await engine.replica.listRecords(typeId, PROPERTIES_DS)
  return recs
    .filter((r) => !r.deleted && r.value !== undefined)
    .sort((a, b) => (a.verId < b.verId ? -1 : a.verId > b.verId ? 1 : 0))
    .map((r) => propertyOf(typeId, r))
}

/** `GET {T}/properties` (404 `type.not_found`). */
export async function listProperties(engine: SpaceEngine, typeId: string): Promise<PropertyDef[]> {
  getType(engine, typeId)
  if (isBuiltinType(typeId)) return builtinProperties(typeId).map((p) => structuredClone(p))
  return userProperties(engine, typeId)
}

/**
 * One definition as the value route sees it: live, tombstoned (`deleted`), or absent
 * (undefined). Built-in types answer their static definitions.
 */
export async function findProperty(engine: SpaceEngine, typeId: string, propId: string): Promise<{ def?: PropertyDef; deleted: boolean } | undefined> {
  if (isBuiltinType(typeId)) {
    const def = builtinProperties(typeId).find((p) => p.id === propId)
    return def ? { def, deleted: false } : undefined
  }
  const rec = await engine.replica.getRecord(typeId, PROPERTIES_DS, propId)
  if (!rec) return undefined
  if (rec.deleted || rec.value === undefined) return { deleted: true }
  return { def: propertyOf(typeId, rec), deleted: false }
}

/** `GET {T}/properties/:propId` (not a spec route; for callers): 404 `sdk.not_found`. */
export async function getProperty(engine: SpaceEngine, typeId: string, propId: string): Promise<PropertyDef> {
  getType(engine, typeId)
  const found = await findProperty(engine, typeId, propId)
  if (!found?.def) throw new SvcError('sdk.not_found', 'property not found', { typeId, propId })
  return found.def
}

function checkShape(v: unknown, field: string): JsonObject {
  if (!isObj(v) || typeof v.kind !== 'string' || !(PROPERTY_KINDS as readonly string[]).includes(v.kind)) throw invalidField(field, `${field} must be a shape {kind}`)
  return v
}

function checkMeta(meta: unknown): JsonObject | undefined {
  if (meta === undefined) return undefined
  if (!isObj(meta)) throw invalidField('meta', 'meta must be an object')
  for (const [k, v] of Object.entries(meta)) {
    checkEntryKey(k, `meta.${k}`)
    if (v === null || isObj(v)) throw invalidField(`meta.${k}`, 'meta values are leaves (string, number, boolean or array)')
    if (k === 'index' && (typeof v !== 'string' || !/^[a-z0-9_-]{1,64}$/.test(v))) throw invalidField('meta.index', 'meta.index is props, none or a scope slug')
  }
  return meta
}

/**
 * `POST {T}/properties` -> `{propId}`. Kind is required and explicit; scope defaults to
 * synced; `format` is the slug shorthand for `xFormat.type` (default: the kind's first slug).
 * 400 `property.format_invalid` (slug not fitting the kind, malformed xFormat), 400
 * `type.registered` (built-ins), 409 `property.xkey_conflict` (`details.xKey`,
 * `details.existingPropId`). Call under the service's mutex (read-then-create).
 */
export async function createProperty(engine: SpaceEngine, typeId: string, body: PropertyCreateBody): Promise<{ propId: string }> {
  if (!isObj(body)) throw invalidField('', 'body must be an object')
  requireUserType(engine, typeId)
  const record = checkPropertyCreate(body, typeId)
  if (typeof record.xKey === 'string') await assertXKeyFree(engine, typeId, record.xKey)
  const res = await engine.write(typeId, [{ op: 'set', ds: PROPERTIES_DS, id: CHANGE_DERIVED_ID, path: '', value: record }])
  return { propId: res.recordIds[0] }
}

/**
 * The body checks of `createProperty` (everything but the type's existence and the xKey's
 * uniqueness among the type's live properties): returns the definition record to store.
 */
export function checkPropertyCreate(body: PropertyCreateBody, typeId: string): JsonObject {
  if (!isObj(body)) throw invalidField('', 'body must be an object')
  if (body.name === undefined) throw new SvcError('request.missing_field', 'name is required', { field: 'name' })
  if (typeof body.name !== 'string') throw invalidField('name', 'name must be a string')
  if (body.kind === undefined) throw new SvcError('request.missing_field', 'kind is required (string, number, boolean, array, object, datetime)', { field: 'kind' })
  if (typeof body.kind !== 'string' || !(PROPERTY_KINDS as readonly string[]).includes(body.kind))
    throw invalidField('kind', 'kind is one of string, number, boolean, array, object, datetime', { accepted: PROPERTY_KINDS })
  const kind = body.kind as PropertyKind
  const scope = body.scope ?? 'synced'
  if (typeof scope !== 'string' || !(PROPERTY_SCOPES as readonly string[]).includes(scope))
    throw invalidField('scope', 'scope is one of synced, account, local', { accepted: PROPERTY_SCOPES })
  if (body.description !== undefined && typeof body.description !== 'string') throw invalidField('description', 'description must be a string')

  const xFormat: JsonObject = body.xFormat === undefined ? {} : { ...checkXFormat(kind, body.xFormat) }
  if (body.format !== undefined) {
    const slug = checkSlug(kind, body.format, 'format')
    if (xFormat.type !== undefined && xFormat.type !== slug) throw new SvcError('property.format_invalid', 'format and xFormat.type disagree', { path: 'format' })
    xFormat.type = slug
  }
  xFormat.type ??= defaultSlug(kind)
  const meta = checkMeta(body.meta)

  const record: JsonObject = { kind, scope, name: body.name, description: body.description ?? '', meta: meta ?? {}, xFormat, typeId }
  if (body.items !== undefined) {
    if (kind !== 'array') throw invalidField('items', 'items is for kind array')
    record.items = checkShape(body.items, 'items')
  }
  if (body.properties !== undefined) {
    if (kind !== 'object') throw invalidField('properties', 'properties is for kind object')
    if (!isObj(body.properties)) throw invalidField('properties', 'properties must be an object of name to shape')
    for (const [k, s] of Object.entries(body.properties)) {
      checkEntryKey(k, `properties.${k}`)
      checkShape(s, `properties.${k}`)
    }
    record.properties = body.properties
  }
  if (body.xKey !== undefined) {
    if (typeof body.xKey !== 'string' || !XKEY_RE.test(body.xKey)) throw invalidField('xKey', 'xKey must be a code handle ([A-Za-z0-9_.:/@+-], up to 128 chars)')
    record.xKey = body.xKey
  }
  return record
}

async function assertXKeyFree(engine: SpaceEngine, typeId: string, xKey: string, self?: string) {
  const taken = (await userProperties(engine, typeId)).find((p) => p.xKey === xKey && p.id !== self)
  if (taken) throw new SvcError('property.xkey_conflict', 'another property of this type uses this xKey', { xKey, existingPropId: taken.id, typeId })
}

async function requireLiveProperty(engine: SpaceEngine, typeId: string, propId: string): Promise<PropertyDef> {
  const found = await findProperty(engine, typeId, propId)
  if (!found?.def) throw new SvcError('sdk.not_found', 'property not found', { typeId, propId })
  return found.def
}

/**
 * `PATCH {T}/properties/:propId` with `{set: {path: leaf}, unset: [path]}`: one change, unsets
 * first then sets (so `unset: [xFormat.options]` plus `set: {xFormat.options.a.name}` leaves
 * only option a). Path rules in property-patch.ts. 404 `sdk.not_found` for an unknown or
 * removed property.
 */
export async function patchProperty(engine: SpaceEngine, typeId: string, propId: string, body: unknown): Promise<void> {
  requireUserType(engine, typeId)
  const def = await requireLiveProperty(engine, typeId, propId)
  const { set, unset } = readSetUnset(body)
  for (const p of unset) classifyPropertyPath(p)
  let newXKey: string | undefined
  for (const [p, v] of set) {
    const cls = checkSetEntry(p, v, def.kind)
    if (cls.type === 'leaf' && cls.xKey) newXKey = v as string
  }
  if (newXKey !== undefined) await assertXKeyFree(engine, typeId, newXKey, propId)
  const ops: Op[] = [
    ...unset.map((path): Op => ({ op: 'unset', ds: PROPERTIES_DS, id: propId, path })),
    ...set.map(([path, value]): Op => ({ op: 'set', ds: PROPERTIES_DS, id: propId, path, value: value as Json })),
  ]
  await engine.write(typeId, ops)
}

/** `DELETE {T}/properties/:propId`: tombstones the definition; values stay as orphan data. */
export async function deleteProperty(engine: SpaceEngine, typeId: string, propId: string): Promise<void> {
  requireUserType(engine, typeId)
  await requireLiveProperty(engine, typeId, propId)
  await engine.write(typeId, [{ op: 'delete', ds: PROPERTIES_DS, id: propId }])
}
