import { SvcError } from '../../core/errors.ts'
import { propertyIdSync } from '../../crypto/hash.ts'
import { CHANGE_DERIVED_ID, type Json, type JsonObject, type Op } from '../../crdt/ops.ts'
import type { MaterializedRecord } from '../../replica/space-replica.ts'
import { DATASETS_DS } from '../schema.ts'
import type { ModuleDataset, ModuleSet } from '../module.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { isBuiltinType } from './builtins.ts'
import { FIELD_TYPES, invalidField, isObj, readSetUnset, type DatasetDecl, type FieldDecl } from './model.ts'
import { listTypes, requireUserType } from './type-defs.ts'

/**
 * Dataset declarations: records of the type object's `datasets` dataset. Pinned by merge
 * (schema.ts): key, collection, module, shared, idRule, typeId, partId.
 *
 * Record id (the `datasetDefId`): the dataset key, or `<key>~<n>` (first free n) once an
 * earlier declaration of that key was removed, since a tombstoned record absorbs later writes.
 * Keys are unique among a type's live declarations, so two peers declaring one key
 * concurrently converge on one record (first write wins on the pinned paths).
 *
 * `partId`: a declaration written in its part's creating change cannot know the part's id
 * (it derives from that very change), so it stores CHANGE_DERIVED_ID and is read as the id
 * derived from the record's creating change, which is the part's.
 *
 * Draft (svc's form of the spec's draft keys): `{key?, module?, shared?, displayName?,
 * idRule?, idPattern?, idMaxLen?, deleteBy?, search?, dynamic?, fields?}`:
 * - `key`: `[A-Za-z][A-Za-z0-9_]{0,63}`; default: the module's canonical key when shared, else
 *   the part's key. Collection: `<typeId>_<key>`, or the module's canonical collection when
 *   `shared`.
 * - `module`: a dataset kind one of the space's modules serves (ModuleDataset in
 *   ../module.ts): `editor` (canonical `editor_blocks`, key `blocks`; shared or per part) or
 *   `chat` (canonical `chat_messages`, key `messages`; shared-only, `shared` defaults to true)
 *   in the release's list. Unknown: 400 `dataset.module_unknown`. A module dataset takes no `fields`, `idRule`,
 *   `idPattern`, `idMaxLen` or `dynamic`: 409 `dataset.module_owned`.
 * - `shared: true` without a module: 400 `dataset.decl_invalid`; with a key other than the
 *   canonical one, or `shared: false` on a shared-only module: 400 `dataset.shared_conflict`.
 * - `idRule`: `auto` (default, server-derived ids) or `user` (caller-chosen ids; upsert).
 *   `idPattern` (a regular expression the whole id must match) and `idMaxLen` (1..256) only
 *   with `idRule: user`.
 * - `deleteBy`: `any` (default) or `author`; `search`: boolean or field names; `displayName`:
 *   string; `dynamic`: accept undeclared fields (mutable by anyone).
 * - `fields`: `{name: {type?, required?, mutableBy?, scope?, description?}}`; names
 *   `[A-Za-z][A-Za-z0-9_]{0,63}` other than `id`; `type` one of string, number, integer,
 *   boolean, array, object, datetime, any (default any); `mutableBy` `author` or `any`, absent
 *   = write-once; `scope` `synced` (default) or `local` (listed as `x-scope`).
 * Anything else malformed: 400 `dataset.decl_invalid`. A key taken on the type: 409
 * `dataset.key_conflict` (`details.key`).
 */

export const DATASET_PINNED = ['id', 'key', 'collection', 'module', 'shared', 'idRule', 'typeId', 'partId']
export const DATASET_KEY_RE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/
const FIELD_NAME_RE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/
const DRAFT_KEYS = new Set(['key', 'module', 'shared', 'displayName', 'idRule', 'idPattern', 'idMaxLen', 'deleteBy', 'search', 'dynamic', 'fields'])
const FIELD_KEYS = new Set(['type', 'required', 'mutableBy', 'scope', 'description'])

export const namespacedCollection = (typeId: string, key: string) => `${typeId}_${key}`

const declInvalid = (message: string, details?: Record<string, unknown>) => new SvcError('dataset.decl_invalid', message, details)
const moduleOwned = (module: string, field: string) => new SvcError('dataset.module_owned', `the ${module} module owns this dataset's schema`, { module, field })

/** A declaration as stored, without the record id and partId. */
export type DeclRecord = Omit<DatasetDecl, 'id' | 'partId'>

export function checkFieldDecl(name: string, f: unknown): FieldDecl {
  if (!FIELD_NAME_RE.test(name) || name === 'id') throw declInvalid(`bad field name ${JSON.stringify(name)}`, { field: name })
  if (!isObj(f)) throw declInvalid('a field declaration is an object', { field: name })
  for (const k of Object.keys(f)) if (!FIELD_KEYS.has(k)) throw declInvalid(`unknown field declaration key ${k}`, { field: name })
  if (f.type !== undefined && !(FIELD_TYPES as readonly Json[]).includes(f.type)) throw declInvalid('bad field type', { field: name, accepted: FIELD_TYPES })
  if (f.required !== undefined && typeof f.required !== 'boolean') throw declInvalid('required is a boolean', { field: name })
  if (f.mutableBy !== undefined && f.mutableBy !== 'author' && f.mutableBy !== 'any') throw declInvalid('mutableBy is author or any (absent: write-once)', { field: name })
  if (f.scope !== undefined && f.scope !== 'synced' && f.scope !== 'local') throw declInvalid('scope is synced or local', { field: name })
  if (f.description !== undefined && typeof f.description !== 'string') throw declInvalid('description is a string', { field: name })
  return f
}

function checkIdRules(out: { idRule: string; idPattern?: string; idMaxLen?: number }, d: JsonObject) {
  if (d.idPattern !== undefined) {
    if (typeof d.idPattern !== 'string' || d.idPattern.length > 512) throw declInvalid('idPattern is a regular expression string')
    try {
      new RegExp(d.idPattern)
    } catch {
      throw declInvalid('idPattern does not compile')
    }
    out.idPattern = d.idPattern
  }
  if (d.idMaxLen !== undefined) {
    if (!Number.isSafeInteger(d.idMaxLen) || (d.idMaxLen as number) < 1 || (d.idMaxLen as number) > 256) throw declInvalid('idMaxLen is an integer from 1 to 256')
    out.idMaxLen = d.idMaxLen as number
  }
  if ((out.idPattern !== undefined || out.idMaxLen !== undefined) && out.idRule !== 'user') throw declInvalid('idPattern and idMaxLen need idRule: user')
}

/** Validates a draft and resolves its key and collection (rules in the file comment). */
export function checkDraft(draft: unknown, ctx: { typeId: string; partKey: string; modules: ModuleSet }): DeclRecord {
  if (!isObj(draft)) throw declInvalid('a dataset declaration is an object')
  for (const k of Object.keys(draft)) if (!DRAFT_KEYS.has(k)) throw declInvalid(`unknown declaration key ${k}`, { field: k })
  const d = draft
  let module: string | undefined
  let mod: ModuleDataset | undefined
  if (d.module !== undefined) {
    if (typeof d.module !== 'string') throw declInvalid('module is a string')
    mod = ctx.modules.kind(d.module)
    if (!mod) throw new SvcError('dataset.module_unknown', `unknown module ${d.module}`, { module: d.module, known: ctx.modules.allKinds().map((k) => k.kind) })
    module = d.module
    const fieldsGiven = d.fields !== undefined && !(isObj(d.fields) && Object.keys(d.fields).length === 0)
    if (fieldsGiven) throw moduleOwned(module, 'fields')
    for (const k of ['idRule', 'idPattern', 'idMaxLen', 'dynamic']) if (d[k] !== undefined) throw moduleOwned(module, k)
  }
  if (d.shared !== undefined && typeof d.shared !== 'boolean') throw declInvalid('shared is a boolean')
  let shared = d.shared as boolean | undefined
  if (mod?.sharedOnly) {
    if (shared === false) throw new SvcError('dataset.shared_conflict', `the ${module} module is shared-only`, { module })
    shared = true
  }
  if (shared && !mod) throw declInvalid('shared needs a module with a canonical collection', { field: 'shared' })
  if (d.key !== undefined && (typeof d.key !== 'string' || !DATASET_KEY_RE.test(d.key))) throw declInvalid('key is [A-Za-z][A-Za-z0-9_]{0,63}', { field: 'key' })
  let key: string
  let collection: string
  if (shared && mod) {
    if (d.key !== undefined && d.key !== mod.canonicalKey) {
      throw new SvcError('dataset.shared_conflict', `a shared ${module} dataset has the canonical key ${mod.canonicalKey}`, { module, key: d.key, canonicalKey: mod.canonicalKey })
    }
    key = mod.canonicalKey
    collection = mod.canonicalCollection
  } else {
    key = d.key ?? ctx.partKey
    if (!DATASET_KEY_RE.test(key)) throw declInvalid('key is [A-Za-z][A-Za-z0-9_]{0,63}', { field: 'key' })
    collection = namespacedCollection(ctx.typeId, key)
  }
  const out: DeclRecord = { typeId: ctx.typeId, key, collection, idRule: 'auto', fields: {} }
  if (module) out.module = module
  if (shared) out.shared = true
  if (d.idRule !== undefined) {
    if (d.idRule !== 'auto' && d.idRule !== 'user') throw declInvalid('idRule is auto or user', { field: 'idRule' })
    out.idRule = d.idRule
  }
  checkIdRules(out, d)
  if (d.displayName !== undefined) {
    if (typeof d.displayName !== 'string') throw declInvalid('displayName is a string')
    out.displayName = d.displayName
  }
  if (d.deleteBy !== undefined) {
    if (d.deleteBy !== 'any' && d.deleteBy !== 'author') throw declInvalid('deleteBy is any or author')
    out.deleteBy = d.deleteBy
  }
  if (d.search !== undefined) {
    if (!(typeof d.search === 'boolean' || (Array.isArray(d.search) && d.search.every((s) => typeof s === 'string'))))
      throw declInvalid('search is a boolean or a list of field names')
    out.search = d.search
  }
  if (d.dynamic !== undefined) {
    if (typeof d.dynamic !== 'boolean') throw declInvalid('dynamic is a boolean')
    out.dynamic = d.dynamic
  }
  if (d.fields !== undefined) {
    if (!isObj(d.fields)) throw declInvalid('fields is an object of field name to declaration')
    for (const [name, f] of Object.entries(d.fields)) out.fields[name] = checkFieldDecl(name, f)
  }
  return out
}

export function declOf(typeId: string, rec: MaterializedRecord): DatasetDecl {
  const v = (rec.value ?? {}) as JsonObject
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a declaration's field as text, whatever a peer stored, the same on every peer
  const partId = v.partId === CHANGE_DERIVED_ID ? propertyIdSync(rec.created.c) : String(v.partId ?? '')
  const d: DatasetDecl = {
    id: rec.id,
    typeId,
    partId,
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a declaration's field as text, whatever a peer stored, the same on every peer
    key: String(v.key ?? ''),
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a declaration's field as text, whatever a peer stored, the same on every peer
    collection: String(v.collection ?? ''),
    idRule: v.idRule === 'user' ? 'user' : 'auto',
    fields: isObj(v.fields) ? (v.fields as unknown as Record<string, FieldDecl>) : {},
  }
  if (typeof v.module === 'string') d.module = v.module
  if (v.shared === true) d.shared = true
  if (typeof v.displayName === 'string') d.displayName = v.displayName
  if (typeof v.idPattern === 'string') d.idPattern = v.idPattern
  if (typeof v.idMaxLen === 'number') d.idMaxLen = v.idMaxLen
  if (v.deleteBy === 'any' || v.deleteBy === 'author') d.deleteBy = v.deleteBy
  if (typeof v.search === 'boolean' || Array.isArray(v.search)) d.search = v.search as boolean | string[]
  if (typeof v.dynamic === 'boolean') d.dynamic = v.dynamic
  return d
}

/** Every declaration record of a type, tombstones included (for id allocation). */
export async function declRecords(engine: SpaceEngine, typeId: string): Promise<MaterializedRecord[]> {
  return engine.replica.listRecords(typeId, DATASETS_DS)
}

/** Live declarations of one type, in creation order. */
export async function typeDatasets(engine: SpaceEngine, typeId: string): Promise<DatasetDecl[]> {
  if (isBuiltinType(typeId)) return []
  const recs = (await declRecords(engine, typeId)).filter((r) => !r.deleted && r.value !== undefined)
  recs.sort((a, b) => (a.verId < b.verId ? -1 : a.verId > b.verId ? 1 : 0))
  return recs.map((r) => declOf(typeId, r))
}

/** Live declarations across every user type of the space (hidden ones included). */
export async function allDatasetDecls(engine: SpaceEngine): Promise<DatasetDecl[]> {
  const out: DatasetDecl[] = []
  for (const t of listTypes(engine, { includeHidden: true })) if (!isBuiltinType(t.id)) out.push(...(await typeDatasets(engine, t.id)))
  return out
}

/** Declarations of one collection name and the types that own it (editor/chat/upsert use this). */
export async function declarationsOf(engine: SpaceEngine, collection: string): Promise<DatasetDecl[]> {
  return (await allDatasetDecls(engine)).filter((d) => d.collection === collection)
}

/** Allocates record ids for new declarations: the key, or `<key>~<n>` past tombstones. */
export function allocateDeclIds(existing: MaterializedRecord[], keys: string[]): string[] {
  const used = new Set(existing.map((r) => r.id))
  return keys.map((key) => {
    let id = key
    for (let n = 1; used.has(id); n++) id = `${key}~${n}`
    used.add(id)
    return id
  })
}

/** Refuses keys already declared on the type (live) or repeated among the new drafts. */
export function assertKeysFree(existing: DatasetDecl[], drafts: DeclRecord[]) {
  const seen = new Map(existing.map((d) => [d.key, d.id]))
  for (const d of drafts) {
    if (seen.has(d.key)) throw new SvcError('dataset.key_conflict', `dataset key ${d.key} is taken on this type`, { key: d.key, existingDatasetDefId: seen.get(d.key) })
    seen.set(d.key, '')
  }
}

/** Ops creating declarations (`partId` may be CHANGE_DERIVED_ID: the part of the same change). */
export function declOps(ids: string[], drafts: DeclRecord[], partId: string): Op[] {
  return drafts.map((d, i): Op => ({ op: 'set', ds: DATASETS_DS, id: ids[i], path: '', value: { ...(d as unknown as JsonObject), partId } }))
}

const compiles = (re: string) => {
  try {
    new RegExp(re)
    return true
  } catch {
    return false
  }
}

const SCALAR_CHECKS: Record<string, (v: unknown) => boolean> = {
  displayName: (v) => typeof v === 'string',
  deleteBy: (v) => v === 'any' || v === 'author',
  search: (v) => typeof v === 'boolean' || (Array.isArray(v) && v.every((s) => typeof s === 'string')),
  dynamic: (v) => typeof v === 'boolean',
  idPattern: (v) => typeof v === 'string' && v.length <= 512 && compiles(v),
  idMaxLen: (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 && v <= 256,
}

async function requireDecl(engine: SpaceEngine, typeId: string, datasetDefId: string): Promise<DatasetDecl> {
  const rec = await engine.replica.getRecord(typeId, DATASETS_DS, datasetDefId)
  if (!rec || rec.deleted || rec.value === undefined) throw new SvcError('dataset.not_found', 'dataset declaration not found', { typeId, datasetDefId })
  return declOf(typeId, rec)
}

/**
 * Patches a declaration with `{set, unset}` (svc's route; the spec does not show it). Pinned
 * paths (`key`, `collection`, `module`, `shared`, `idRule`, `typeId`, `partId`, `id`): 400
 * `dataset.immutable` (`details.path`). Mutable: `displayName`, `deleteBy`, `search`,
 * `dynamic`, `idPattern`, `idMaxLen` (idRule user only), `fields.<name>` (a whole field
 * declaration; unset removes the field) and `fields.<name>.<attr>`. Field paths on a module
 * dataset: 409 `dataset.module_owned`. Unknown paths: 400 `request.invalid_field`.
 */
export async function patchDataset(engine: SpaceEngine, typeId: string, datasetDefId: string, body: unknown): Promise<void> {
  requireUserType(engine, typeId)
  const decl = await requireDecl(engine, typeId, datasetDefId)
  const { set, unset } = readSetUnset(body)
  const ops: Op[] = []
  const check = (path: string, value: unknown, isSet: boolean) => {
    const seg = path.split('.')
    if (DATASET_PINNED.includes(seg[0])) throw new SvcError('dataset.immutable', `${seg[0]} is pinned`, { path })
    if (seg.length === 1 && Object.hasOwn(SCALAR_CHECKS, seg[0])) {
      if (decl.module && ['dynamic', 'idPattern', 'idMaxLen'].includes(seg[0])) throw moduleOwned(decl.module, seg[0])
      if (seg[0].startsWith('id') && decl.idRule !== 'user') throw declInvalid('idPattern and idMaxLen need idRule: user', { path })
      if (isSet && !SCALAR_CHECKS[seg[0]](value)) throw declInvalid(`bad value for ${path}`, { path })
      return
    }
    if (seg[0] === 'fields' && seg.length >= 2 && seg.length <= 3) {
      if (decl.module) throw moduleOwned(decl.module, 'fields')
      if (!isSet) return
      if (seg.length === 2) checkFieldDecl(seg[1], value)
      else checkFieldDecl(seg[1], { ...(decl.fields[seg[1]] ?? {}), [seg[2]]: value })
      return
    }
    throw invalidField(path, `unknown dataset declaration path ${path}`, { path })
  }
  for (const p of unset) {
    check(p, undefined, false)
    ops.push({ op: 'unset', ds: DATASETS_DS, id: datasetDefId, path: p })
  }
  for (const [p, v] of set) {
    check(p, v, true)
    ops.push({ op: 'set', ds: DATASETS_DS, id: datasetDefId, path: p, value: v as Json })
  }
  await engine.write(typeId, ops)
}

/** Removes one declaration (tombstone). Records already in objects stay as orphan data. */
export async function deleteDataset(engine: SpaceEngine, typeId: string, datasetDefId: string): Promise<void> {
  requireUserType(engine, typeId)
  await requireDecl(engine, typeId, datasetDefId)
  await engine.write(typeId, [{ op: 'delete', ds: DATASETS_DS, id: datasetDefId }])
}
