import { SvcError } from '../../core/errors.ts'
import { checkValue, InvalidOp, type Json, type JsonObject } from '../../crdt/ops.ts'
import type { WriteRejection } from '../../replica/types.ts'
import { asStringArray } from '../rows.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { currentSlug, valueViolation } from './formats.ts'
import { isObj, type PropertyDef } from './model.ts'
import { findProperty } from './property-defs.ts'
import { getType } from './type-defs.ts'

/**
 * Values of account- and local-scope properties. They never enter the space's replica: this
 * release keeps them in a store the caller owns (default: in memory, per TypesService), keyed
 * by (scope, space, object, type key, propId). They do not sync to other members or to the
 * account's other devices and do not appear in object rows; read them with `scopedValues`.
 * A daemon that wants them to survive restarts passes a persistent store.
 */
export interface ScopedValueStore {
  set(key: ScopedKey, value: Json | null): void
  get(key: ScopedKey): Json | undefined
  /** Every value held for one object, in insertion order. */
  list(spaceId: string, objectId: string): Array<ScopedKey & { value: Json }>
}

export interface ScopedKey {
  scope: 'account' | 'local'
  spaceId: string
  objectId: string
  typeKey: string
  propId: string
}

export class MemoryScopedValueStore implements ScopedValueStore {
  private readonly values = new Map<string, ScopedKey & { value: Json }>()
  private static k(key: ScopedKey) {
    return JSON.stringify([key.spaceId, key.objectId, key.scope, key.typeKey, key.propId])
  }
  set(key: ScopedKey, value: Json | null) {
    const k = MemoryScopedValueStore.k(key)
    if (value === null) this.values.delete(k)
    else this.values.set(k, { ...key, value: structuredClone(value) })
  }
  get(key: ScopedKey) {
    const v = this.values.get(MemoryScopedValueStore.k(key))?.value
    return v === undefined ? undefined : structuredClone(v)
  }
  list(spaceId: string, objectId: string) {
    return [...this.values.values()].filter((v) => v.spaceId === spaceId && v.objectId === objectId).map((v) => structuredClone(v))
  }
}

/**
 * Answer of `POST {S}/properties/:objectId/set/:typeKey`: a write result when synced values
 * were written (`versionId`, `changeId`; `recordIds` is `[objectId]`), the propIds stored
 * per device or account scope, and `rejections` for values dropped because their property was
 * removed (code `property.deleted`). When nothing synced was written there is no changeId.
 */
export interface PropertySetResult {
  versionId?: string
  changeId?: string
  recordIds: string[]
  rejections?: WriteRejection[]
  scoped?: { account?: string[]; local?: string[] }
}

/** Accepts the bare map `{propId: value}` or the wrapper `{patch: {propId: value}}`. */
export function valuesOfBody(body: unknown): Array<[string, unknown]> {
  if (!isObj(body)) throw new SvcError('request.invalid_field', 'body must be an object of propId to value', { field: '' })
  const keys = Object.keys(body)
  const map = keys.length === 1 && keys[0] === 'patch' && isObj(body.patch) ? body.patch : body
  const entries = Object.entries(map) as Array<[string, unknown]>
  if (entries.length === 0) throw new SvcError('request.missing_field', 'give at least one property value')
  return entries
}

/**
 * Typed set of property values under `{typeKey}.{propId}` of one object (`core` for the
 * universal group). Rules:
 * - the object must exist (404 `object.not_found`), the type key must be `core` or a known type
 *   (404 `type.not_found`) the object carries (400 `object.type_required`); `core.types` is not
 *   a property (400 `request.invalid_field`: types change through attach/detach, 501);
 * - every propId must name a definition of that type (404 `property.not_found`,
 *   `details.propId`): unknown ids are refused, not stored;
 * - a removed (tombstoned) definition's value is dropped and listed in `rejections`;
 * - each value is checked against the definition's kind and current slug (400
 *   `property.format_violation`, `details.propId`, `format`, `reason`); null unsets;
 * - nothing is written unless every value passes (all or nothing); then synced values are
 *   one change on the row, account/local values go to the scoped store.
 */
export async function setPropertyValues(engine: SpaceEngine, store: ScopedValueStore, objectId: string, typeKey: string, body: unknown): Promise<PropertySetResult> {
  const entries = valuesOfBody(body)
  const row = engine.requireObject(objectId)
  if (typeKey !== 'core') {
    getType(engine, typeKey)
    if (!asStringArray((row.core as JsonObject | undefined)?.types).includes(typeKey)) {
      throw new SvcError('object.type_required', 'the object does not carry this type', { objectId, typeId: typeKey })
    }
  }
  const { synced, scoped, rejections } = await checkPropertyValues(engine, typeKey, entries)
  const result: PropertySetResult = { recordIds: [objectId] }
  if (Object.keys(synced).length) {
    const w = await engine.setRowValues(objectId, typeKey, synced)
    result.versionId = w.versionId
    result.changeId = w.changeId
    if (w.rejections?.length) rejections.push(...w.rejections)
    await engine.settled()
  }
  for (const { def, value } of scoped) {
    store.set({ scope: def.scope as 'account' | 'local', spaceId: engine.spaceId, objectId, typeKey, propId: def.id }, value)
    const list = ((result.scoped ??= {})[def.scope as 'account' | 'local'] ??= [])
    list.push(def.id)
  }
  if (rejections.length) result.rejections = rejections
  return result
}

/**
 * Checks values of one type key without writing (the property rules of setPropertyValues
 * after the object checks); also for callers that write values another way (object creation
 * with initialProperties, bundles). Returns the synced values by propId, the account/local
 * ones with their definitions, and the dropped values of removed properties.
 */
export async function checkPropertyValues(
  engine: SpaceEngine,
  typeKey: string,
  entries: Array<[string, unknown]>,
): Promise<{ synced: Record<string, Json>; scoped: Array<{ def: PropertyDef; value: Json }>; rejections: WriteRejection[] }> {
  if (typeKey !== 'core') getType(engine, typeKey)
  const synced: Record<string, Json> = {}
  const scoped: Array<{ def: PropertyDef; value: Json }> = []
  const rejections: WriteRejection[] = []
  for (let i = 0; i < entries.length; i++) {
    const [propId, value] = entries[i]
    if (typeKey === 'core' && propId === 'types') throw new SvcError('request.invalid_field', 'core.types is not a property; types are attached at creation', { field: 'types' })
    try {
      checkValue(value)
    } catch (err) {
      throw new SvcError('request.invalid_field', `value is not storable: ${err instanceof InvalidOp ? err.reason : 'invalid'}`, { field: propId })
    }
    const found = await findProperty(engine, typeKey, propId)
    if (!found) throw new SvcError('property.not_found', 'no such property on this type', { propId, typeId: typeKey })
    if (!found.def) {
      rejections.push({ recordId: propId, index: i, code: 'property.deleted', reason: 'the property was removed; its values are not written' })
      continue
    }
    const def = found.def
    const slug = currentSlug(def.kind, def.xFormat)
    const reason = valueViolation(def.kind, slug, value, isObj(def.xFormat.config) ? def.xFormat.config : undefined, def.items)
    if (reason) throw new SvcError('property.format_violation', `value does not fit ${slug}: ${reason}`, { propId, format: slug, reason })
    if (def.scope === 'synced') synced[propId] = value
    else scoped.push({ def, value })
  }
  return { synced, scoped, rejections }
}

/** Account- and local-scope values of one object, grouped like a row: `{typeKey: {propId: value}}`. */
export function scopedValues(engine: SpaceEngine, store: ScopedValueStore, objectId: string): Record<string, Record<string, Json>> {
  const out: Record<string, Record<string, Json>> = {}
  for (const v of store.list(engine.spaceId, objectId)) (out[v.typeKey] ??= {})[v.propId] = v.value
  return out
}
