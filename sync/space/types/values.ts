import { SvcError } from '../../core/errors.ts'
import { checkValue, InvalidOp, type Json, type JsonObject } from '../../crdt/ops.ts'
import type { WriteRejection } from '../../replica/types.ts'
import { compileProjection, type CompiledQuery, type Doc, type Projection, type QueryResult } from '../../query/index.ts'
import { asStringArray } from '../rows.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { currentSlug, kindMismatch, valueViolation } from './formats.ts'
import { isObj, type PropertyDef } from './model.ts'
import { findProperty } from './property-defs.ts'
import { getType } from './type-defs.ts'
import { setModuleGroupValues } from './module-groups.ts'

/**
 * Where property values live, by the definition's `scope` (spec "Property definition": scope
 * "selects write route and version domain"):
 *
 * - `synced`: a write to the object row at `{typeKey}.{propId}` in the space's replica; every
 *   member's device gets it; filters, sorts and live subscriptions see it.
 * - `account`: the caller's own value, kept out of the space's replica in a ScopedValueStore.
 *   The daemon's store (sync/space/scoped-values.ts, `AccountEngine.scopedValues`) writes it to
 *   the account's tech space, so it persists and reaches the account's other devices, never
 *   other members.
 * - `local`: the same, but the daemon's store keeps it in this device's own storage: it
 *   persists and never syncs anywhere.
 *
 * Reading: `POST {S}/objects/query` overlays the caller's account and local values onto the
 * rows of the page it returns, at `{typeKey}.{propId}` like synced ones (overlayScopedValues).
 * Filters and sorts run before the overlay, so they see synced values only; live subscription
 * rows (`{S}/objects/query/subscribe`) carry synced values only. MemoryScopedValueStore (the
 * TypesService default when nobody passes a store) is for unit tests: nothing survives it.
 */
export interface ScopedValueStore {
  /** Stores one value (null unsets it); durable for the store's scope once it resolves. */
  set(key: ScopedKey, value: Json | null): Promise<void>
  /** Several values at once: a store writes each scope's share in one batch (one change). */
  setMany(entries: ReadonlyArray<readonly [ScopedKey, Json | null]>): Promise<void>
  get(key: ScopedKey): Promise<Json | undefined>
  /** Every value held for one object. */
  list(spaceId: string, objectId: string): Promise<Array<ScopedKey & { value: Json }>>
  /**
   * Values of several objects of one space grouped like rows, `{typeKey: {propId: value}}`;
   * objects without values are absent. (One call per query page, so a store can batch.)
   */
  rowsOf(spaceId: string, objectIds: Iterable<string>): Promise<Map<string, ScopedGroups>>
}

export interface ScopedKey {
  scope: 'account' | 'local'
  spaceId: string
  objectId: string
  typeKey: string
  propId: string
}

/** Scoped values of one object as a row holds them: `{typeKey: {propId: value}}`. */
export type ScopedGroups = Record<string, Record<string, Json>>

/** Groups `{typeKey, propId, value}` entries like a row (a later entry wins on the same path). */
export function groupScoped(entries: Iterable<ScopedKey & { value: Json }>): ScopedGroups {
  const out: ScopedGroups = {}
  for (const v of entries) (out[v.typeKey] ??= {})[v.propId] = v.value
  return out
}

export class MemoryScopedValueStore implements ScopedValueStore {
  private readonly values = new Map<string, ScopedKey & { value: Json }>()
  private static k(key: ScopedKey) {
    return JSON.stringify([key.spaceId, key.objectId, key.scope, key.typeKey, key.propId])
  }
  async set(key: ScopedKey, value: Json | null) {
    const k = MemoryScopedValueStore.k(key)
    if (value === null) this.values.delete(k)
    else this.values.set(k, { ...key, value: structuredClone(value) })
  }
  async setMany(entries: ReadonlyArray<readonly [ScopedKey, Json | null]>) {
    for (const [key, value] of entries) await this.set(key, value)
  }
  async get(key: ScopedKey) {
    const v = this.values.get(MemoryScopedValueStore.k(key))?.value
    return v === undefined ? undefined : structuredClone(v)
  }
  async list(spaceId: string, objectId: string) {
    return [...this.values.values()].filter((v) => v.spaceId === spaceId && v.objectId === objectId).map((v) => structuredClone(v))
  }
  async rowsOf(spaceId: string, objectIds: Iterable<string>) {
    const out = new Map<string, ScopedGroups>()
    for (const id of new Set(objectIds)) {
      const entries = await this.list(spaceId, id)
      if (entries.length) out.set(id, groupScoped(entries))
    }
    return out
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
 * - each value is checked against the definition's kind (400 `property.kind_mismatch`: not of
 *   the kind at all, `details.propId`, `kind`, `format`, `reason`), then against its current
 *   slug (400 `property.format_violation`: the right kind but not the slug's shape,
 *   `details.propId`, `format`, `reason`); null unsets;
 * - nothing is written unless every value passes (all or nothing); then synced values are
 *   one change on the row, account/local values go to the scoped store.
 */
export async function setPropertyValues(engine: SpaceEngine, store: ScopedValueStore, objectId: string, typeKey: string, body: unknown): Promise<PropertySetResult> {
  // A row group a module owns (chat's `chat`) is not a type: the module's fields and rules.
  const group = typeKey === 'core' ? undefined : engine.services.rowGroup(typeKey)
  if (group) return setModuleGroupValues(engine, store, group, objectId, typeKey, body)
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
  }
  const writes: Array<[ScopedKey, Json | null]> = []
  for (const { def, value } of scoped) {
    const scope = def.scope as 'account' | 'local'
    writes.push([{ scope, spaceId: engine.spaceId, objectId, typeKey, propId: def.id }, value])
    ;((result.scoped ??= {})[scope] ??= []).push(def.id)
  }
  if (writes.length) await store.setMany(writes)
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
    const wrongKind = kindMismatch(def.kind, value)
    if (wrongKind) throw new SvcError('property.kind_mismatch', `value does not fit ${slug}: ${wrongKind}`, { propId, kind: def.kind, format: slug, reason: wrongKind })
    const reason = valueViolation(def.kind, slug, value, isObj(def.xFormat.config) ? def.xFormat.config : undefined, def.items)
    if (reason) throw new SvcError('property.format_violation', `value does not fit ${slug}: ${reason}`, { propId, format: slug, reason })
    if (def.scope === 'synced') synced[propId] = value
    else scoped.push({ def, value })
  }
  return { synced, scoped, rejections }
}

/**
 * One group's values checked as checkPropertyValues does, split by where each lives: synced ones
 * for the object's row, account- and local-scope ones for the scoped store (written to the row
 * they would reach every member). Values of removed properties are in neither.
 */
export async function splitValues(engine: SpaceEngine, typeKey: string, values: Record<string, unknown>): Promise<{ synced: Record<string, Json>; scoped: Record<string, Json> }> {
  const { synced, scoped } = await checkPropertyValues(engine, typeKey, Object.entries(values))
  return { synced, scoped: Object.fromEntries(scoped.map(({ def, value }) => [def.id, value])) }
}

/** Account- and local-scope values of one object, grouped like a row: `{typeKey: {propId: value}}`. */
export async function scopedValues(engine: SpaceEngine, store: ScopedValueStore, objectId: string): Promise<ScopedGroups> {
  return (await store.rowsOf(engine.spaceId, [objectId])).get(objectId) ?? {}
}

/**
 * A query that selects and pages like `query` but leaves records unprojected, for
 * overlayScopedValues (which projects after overlaying, so a projection sees scoped values).
 */
export function unprojected(query: CompiledQuery): CompiledQuery {
  return { ...query, projection: compileProjection(undefined) }
}

/**
 * The caller's account and local values laid onto a page of object rows at
 * `{typeKey}.{propId}`, then `projection` applied. `page` comes from runQuery over the
 * space's rows with an `unprojected` query: its records are the engine's own row objects,
 * so they are copied, never changed. Selection already happened, so filters and sorts saw
 * synced values only.
 */
export async function overlayScopedValues(store: ScopedValueStore, spaceId: string, page: QueryResult, projection: Projection): Promise<QueryResult> {
  const rows = page.records.length
    ? await store.rowsOf(
        spaceId,
        page.records.map((r) => r.id),
      )
    : new Map<string, ScopedGroups>()
  const records = page.records.map((doc) => {
    const groups = rows.get(doc.id)
    if (!groups) return projection.apply(doc)
    const merged: Doc = { ...doc }
    for (const [typeKey, values] of Object.entries(groups)) {
      const synced = merged[typeKey]
      merged[typeKey] = { ...(isObj(synced) ? synced : {}), ...values }
    }
    return projection.apply(merged)
  })
  return { ...page, records }
}
