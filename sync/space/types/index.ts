/**
 * Types, properties, parts and dataset declarations of one space (spec core.md "Type",
 * "Property definition", "Part and dataset definition", "Modify and upsert bodies").
 *
 * Data model (everything lives in the space's replica and merges like any other data):
 *
 * - A user type is an object whose row carries `core.types` containing `type` and its
 *   definition under the `type` namespace: `type: {name, description, iconCid, xKey, weight,
 *   layout, hidden, meta}`. Type id = that object's id. Built-in types (`core`, `spaceIndex`,
 *   `type`, registered hidden `dataview`, `page`, `miniapp`, `bin`) are static definitions of
 *   the release (builtins.ts), never stored, with readable ids; their definitions are frozen
 *   (400 `type.registered`).
 * - Property definitions are records of the type object's `properties` dataset; record id =
 *   propId, written with record id CHANGE_DERIVED_ID in one change, so propId =
 *   base58(xxh3-64(creating changeId)), up to 11 chars, identical on every peer. Fields:
 *   `{kind, scope, name, description, xKey?, meta, xFormat, items?, properties?, typeId}`.
 *   `kind`, `scope`, `items`, `properties`, `typeId` are pinned by merge (first write wins,
 *   schema.ts) and refused by PATCH (400 `property.immutable`). Removal is a record tombstone:
 *   merge drops every later write to it. `core` has the static universal properties `name`,
 *   `description`, `icon`, `tags`.
 * - Values live in object rows at `{typeKey}.{propId}` (`core.{name|...}` for universal ones).
 *   Synced-scope values are row writes; account- and local-scope values stay out of the
 *   space's replica in a ScopedValueStore (values.ts): the daemon's store keeps account ones in
 *   the account's tech space and local ones in device storage (sync/space/scoped-values.ts).
 * - Parts are records of the type object's `parts` dataset (`{key, name?, icon?, pos?, hidden?,
 *   ui?, uses?, typeId}`), partId change-derived like propIds.
 * - Dataset declarations are records of the type object's `datasets` dataset; their collection
 *   is `<typeId>_<key>`, or a module's canonical collection when shared (`editor_blocks` for
 *   `editor`, `chat_messages` for `chat`). Record id and draft rules: dataset-decls.ts.
 *
 * Routes call TypesService (one per SpaceEngine, `engine.services.types`): every rule lives
 * here. Definition writes run one at a time per space (read-then-create checks of xKeys and
 * keys). Format slugs per kind: formats.ts and docs/types.md.
 */
import { SerialQueue } from '../../core/serial-queue.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { addDataset, createPart, deletePart, listParts, patchPart, type PartCreateBody } from './parts.ts'
import { declarationsOf, deleteDataset, patchDataset } from './dataset-decls.ts'
import { listDatasets, type DatasetListing } from './dataset-listing.ts'
import type { DatasetDecl, PartDef, PropertyDef, TypeInfo } from './model.ts'
import { createProperty, deleteProperty, getProperty, listProperties, patchProperty, type PropertyCreateBody } from './property-defs.ts'
import { attachOrDetachType, createType, deleteType, getType, listTypes, patchType, type TypeCreateBody, type TypePatchBody } from './type-defs.ts'
import { upsert, type UpsertBody, type UpsertResult } from './upsert.ts'
import {
  checkPropertyValues,
  MemoryScopedValueStore,
  overlayScopedValues,
  scopedValues,
  setPropertyValues,
  unprojected,
  type PropertySetResult,
  type ScopedGroups,
  type ScopedValueStore,
} from './values.ts'
import { createObject, createObjects, type ObjectCreateBody } from './object-create.ts'
import { deleteRecordsDeclared, modifyDeclared } from './declared-writes.ts'
import { runQuery, type CompiledQuery, type QueryResult, type QuerySource } from '../../query/index.ts'
import type { ModifyBody } from '../space-engine.ts'
import type { WriteResult } from '../../replica/types.ts'
import { SvcError } from '../../core/errors.ts'

import { ObjectQueryResolver } from './object-query.ts'
export * from './model.ts'
export { BUILTIN_TYPE_INFOS, CORE_PROPERTIES, builtinType, isBuiltinType } from './builtins.ts'
export { FORMAT_SLUGS, defaultSlug, slugFitsKind, currentSlug, valueViolation, instantMs } from './formats.ts'
export { namespacedCollection, declarationsOf, allDatasetDecls, typeDatasets } from './dataset-decls.ts'
export { RECORD_SCHEMA, type DatasetListing } from './dataset-listing.ts'
export {
  MemoryScopedValueStore,
  groupScoped,
  overlayScopedValues,
  unprojected,
  type ScopedValueStore,
  type ScopedKey,
  type ScopedGroups,
  type PropertySetResult,
} from './values.ts'
export type { ObjectCreateBody } from './object-create.ts'
export { ObjectQueryResolver } from './object-query.ts'
export { UPSERT_DEFAULT_PAGE_SIZE, type UpsertBody, type UpsertResult, type UpsertRejection } from './upsert.ts'
export type { TypeCreateBody, TypePatchBody } from './type-defs.ts'
export type { PropertyCreateBody } from './property-defs.ts'
export type { PartCreateBody } from './parts.ts'

export class TypesService {
  /** Serializes the space's definition writes: read-then-create checks (xKeys, keys) stay honest. */
  private readonly definitions = new SerialQueue()
  private readonly store: ScopedValueStore

  /**
   * One per space, built with the space's services (SpaceServices): its queue is the space's
   * definitions lock and `scopedValues` the account's store (default: in memory, for a bare
   * engine).
   */
  constructor(
    readonly engine: SpaceEngine,
    opts: { scopedValues?: ScopedValueStore } = {},
  ) {
    this.store = opts.scopedValues ?? new MemoryScopedValueStore()
  }

  get scoped(): ScopedValueStore {
    return this.store
  }

  private write<T>(fn: () => Promise<T>): Promise<T> {
    return this.definitions.run(fn)
  }

  /**
   * Runs `fn` holding the definitions lock, for callers composing several definition writes
   * (bundles install a type, its properties and parts). Inside, call the module functions
   * (createProperty, createPart ...), never this service's writing methods: the lock is not
   * reentrant.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.write(fn)
  }

  // ------------------------------------------------------------------ types

  /** `GET {S}/types?includeHidden=` -> `{types}`. */
  listTypes(opts: { includeHidden?: boolean } = {}): TypeInfo[] {
    return listTypes(this.engine, opts)
  }
  /** `GET {T}`; 404 `type.not_found`. */
  getType(typeId: string): TypeInfo {
    return getType(this.engine, typeId)
  }
  /** `POST {S}/types` -> 201 TypeInfo; 400 `type.xkey_required`, 409 `type.xkey_conflict`. */
  createType(body: TypeCreateBody): Promise<TypeInfo> {
    return this.write(() => createType(this.engine, body))
  }
  /** `PATCH {T}` -> 204; 400 `type.registered`. */
  patchType(typeId: string, body: TypePatchBody): Promise<void> {
    return this.write(() => patchType(this.engine, typeId, body))
  }
  /** `DELETE {T}` -> 501 `sdk.not_implemented`. */
  async deleteType(typeId: string): Promise<never> {
    return deleteType(this.engine, typeId)
  }
  /** Attach/detach a type after creation -> 501 `sdk.not_implemented`. */
  async attachType(objectId: string, typeId: string): Promise<never> {
    return attachOrDetachType(this.engine, objectId, typeId)
  }
  async detachType(objectId: string, typeId: string): Promise<never> {
    return attachOrDetachType(this.engine, objectId, typeId)
  }

  // ------------------------------------------------------------------ properties

  /** `GET {T}/properties` -> `{properties}`. */
  listProperties(typeId: string): Promise<PropertyDef[]> {
    return listProperties(this.engine, typeId)
  }
  getProperty(typeId: string, propId: string): Promise<PropertyDef> {
    return getProperty(this.engine, typeId, propId)
  }
  /** `POST {T}/properties` -> 201 `{propId}`. */
  createProperty(typeId: string, body: PropertyCreateBody): Promise<{ propId: string }> {
    return this.write(() => createProperty(this.engine, typeId, body))
  }
  /** `PATCH {T}/properties/:propId` with `{set, unset}` -> 204. */
  patchProperty(typeId: string, propId: string, body: unknown): Promise<void> {
    return this.write(() => patchProperty(this.engine, typeId, propId, body))
  }
  /** `DELETE {T}/properties/:propId` -> 204 (tombstone). */
  deleteProperty(typeId: string, propId: string): Promise<void> {
    return this.write(() => deleteProperty(this.engine, typeId, propId))
  }

  // ------------------------------------------------------------------ values

  /** `POST {S}/properties/:objectId/set/:typeKey` (map of propId to value, or `{patch: map}`). */
  setValues(objectId: string, typeKey: string, body: unknown): Promise<PropertySetResult> {
    return setPropertyValues(this.engine, this.store, objectId, typeKey, body)
  }
  /**
   * Checks `{propId: value}` for one type key without writing (for object creation and
   * bundles): 404 `type.not_found`, 404 `property.not_found`, 400 `property.format_violation`.
   * Values of removed properties come back in `dropped`; propIds of account- or local-scope
   * properties in `scoped` (when any: their values belong in the scoped store, not the row).
   */
  async checkValues(typeKey: string, values: Record<string, unknown>): Promise<{ dropped: string[]; scoped?: string[] }> {
    const { scoped, rejections } = await checkPropertyValues(this.engine, typeKey, Object.entries(values))
    return { dropped: rejections.map((r) => r.recordId), ...(scoped.length ? { scoped: scoped.map((v) => v.def.id) } : {}) }
  }
  /** Account- and local-scope values of an object, `{typeKey: {propId: value}}` (not in rows). */
  scopedValues(objectId: string): Promise<ScopedGroups> {
    return scopedValues(this.engine, this.store, objectId)
  }

  // ------------------------------------------------------------------ parts and datasets

  /** `GET {T}/parts` -> `{parts}` (each with its `datasets`). */
  listParts(typeId: string): Promise<PartDef[]> {
    return listParts(this.engine, typeId)
  }
  /** `POST {T}/parts` -> 201 `{partId, datasets: [{datasetDefId, collection}]}` (one change). */
  createPart(typeId: string, body: PartCreateBody): Promise<{ partId: string; datasets: Array<{ datasetDefId: string; collection: string }> }> {
    return this.write(() => createPart(this.engine, typeId, body))
  }
  /** `PATCH {T}/parts/:partId` with `{set, unset}` -> 204. */
  patchPart(typeId: string, partId: string, body: unknown): Promise<void> {
    return this.write(() => patchPart(this.engine, typeId, partId, body))
  }
  /** `DELETE {T}/parts/:partId` -> 204; removes the part and its datasets. */
  deletePart(typeId: string, partId: string): Promise<void> {
    return this.write(() => deletePart(this.engine, typeId, partId))
  }
  /** `POST {T}/parts/:partId/datasets` -> 201 `{datasetDefId, collection}`. */
  addDataset(typeId: string, partId: string, draft: unknown): Promise<{ datasetDefId: string; collection: string }> {
    return this.write(() => addDataset(this.engine, typeId, partId, draft))
  }
  /** Patch a dataset declaration with `{set, unset}` (route not in the spec); 400 `dataset.immutable`. */
  patchDataset(typeId: string, datasetDefId: string, body: unknown): Promise<void> {
    return this.write(() => patchDataset(this.engine, typeId, datasetDefId, body))
  }
  /** Remove one dataset declaration (route not in the spec). */
  deleteDataset(typeId: string, datasetDefId: string): Promise<void> {
    return this.write(() => deleteDataset(this.engine, typeId, datasetDefId))
  }
  /** `GET {S}/datasets` -> `{datasets}`. */
  listDatasets(): Promise<DatasetListing[]> {
    return listDatasets(this.engine)
  }
  /** Live declarations of one collection (module routes: `dataset.not_declared` checks). */
  declarationsOf(collection: string): Promise<DatasetDecl[]> {
    return declarationsOf(this.engine, collection)
  }

  // ------------------------------------------------------------------ objects

  /** `POST {S}/objects` -> the new objectId (rules: object-create.ts). */
  createObject(body: ObjectCreateBody): Promise<string> {
    return createObject(this.engine, this.store, body)
  }

  /** Spec-style bulk create (`POST {S}/objects/batch`, object-create.ts): all or none, ids in order. */
  createObjects(bodies: readonly ObjectCreateBody[]): Promise<string[]> {
    return createObjects(this.engine, this.store, bodies)
  }

  /**
   * `POST {S}/objects/query`: a page of object rows with the caller's account and local values
   * laid on after selection (filters and sorts see synced values; values.ts). `run` is how the
   * query runs (the daemon passes its fair scheduler).
   */
  async queryObjects(query: CompiledQuery, run: (source: QuerySource, query: CompiledQuery) => QueryResult | Promise<QueryResult> = runQuery): Promise<QueryResult> {
    const page = await run(this.engine.objectSource(), unprojected(query))
    return overlayScopedValues(this.store, this.engine.spaceId, page, query.projection)
  }

  /**
   * The natural-query resolver of object queries (object-query.ts): type xKeys in `core.types`
   * values, ISO strings on datetime fields, sort keys checked, hidden rows left out by default.
   */
  objectQuery(): ObjectQueryResolver {
    return new ObjectQueryResolver({ types: this.listTypes({ includeHidden: true }), properties: (typeId) => this.listProperties(typeId) })
  }

  // ------------------------------------------------------------------ data plane

  /**
   * `POST {S}/modify`: per-record ops in one change, under the field rules of declared datasets
   * and the read-only fields of module-served ones (declared-writes.ts); dropped ops come back in
   * `rejections`. `scope: 'local'` writes device-local fields through the module that serves
   * them (the seam's `localWrites`; 501 `sdk.not_implemented` when no module of the set does).
   */
  modify(body: ModifyBody & { scope?: 'synced' | 'local' }): Promise<WriteResult> {
    const { scope, ...rest } = body
    if (scope === 'local') {
      const local = this.engine.services.localWrites
      if (!local) return Promise.reject(new SvcError('sdk.not_implemented', 'no module of this server stores device-local fields (scope: local)'))
      return local(rest)
    }
    return modifyDeclared(this.engine, rest)
  }

  /** `POST {S}/delete-records`: tombstones, refusing records of `deleteBy: author` datasets that others created (declared-writes.ts). */
  deleteRecords(body: { objectId: string; dataset: string; recordIds: string[] }): Promise<WriteResult> {
    return deleteRecordsDeclared(this.engine, body)
  }

  /** `POST {S}/upsert`. */
  upsert(body: UpsertBody): Promise<UpsertResult> {
    return this.write(() => upsert(this.engine, body))
  }
}
