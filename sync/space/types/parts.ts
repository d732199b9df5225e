import { SvcError } from '../../core/errors.ts'
import { CHANGE_DERIVED_ID, type Json, type JsonObject, type Op } from '../../crdt/ops.ts'
import type { MaterializedRecord } from '../../replica/space-replica.ts'
import { DATASETS_DS, PARTS_DS } from '../schema.ts'
import type { SpaceEngine } from '../space-engine.ts'
import type { ModuleSet } from '../module.ts'
import { isBuiltinType } from './builtins.ts'
import { allocateDeclIds, assertKeysFree, checkDraft, DATASET_KEY_RE, declOps, declRecords, typeDatasets, type DeclRecord } from './dataset-decls.ts'
import { invalidField, isObj, readSetUnset, type PartDef } from './model.ts'
import { getType, requireUserType } from './type-defs.ts'

/**
 * Parts: records of the type object's `parts` dataset, `{key, name?, icon?, pos?, hidden?, ui?,
 * uses?, typeId}`; partId = base58(xxh3-64(creating changeId)) (record id CHANGE_DERIVED_ID).
 * A part's key (`[A-Za-z][A-Za-z0-9_]{0,63}`) is unique among the type's live parts (409
 * `dataset.key_conflict`, `details.key`, svc's choice of code) and is the default key of the
 * datasets it declares. `ui` is a free object, `uses` a list of strings (for example module
 * names), `pos` a number, `hidden` a boolean (400 `request.invalid_field` otherwise).
 */

export interface PartCreateBody {
  key?: unknown
  name?: unknown
  icon?: unknown
  pos?: unknown
  hidden?: unknown
  ui?: unknown
  uses?: unknown
  datasets?: unknown
}

const PART_FIELDS = ['name', 'icon', 'pos', 'hidden', 'ui', 'uses'] as const

function checkPartField(path: string, v: unknown): void {
  const root = path.split('.')[0]
  const bad = (what: string) => invalidField(path, `${path} must be ${what}`, { path })
  if (root === 'ui' && path !== 'ui') {
    if (v === null || v === undefined) throw bad('a value')
    return
  }
  switch (path) {
    case 'name':
    case 'icon':
      if (typeof v !== 'string') throw bad('a string')
      return
    case 'pos':
      if (typeof v !== 'number' || !Number.isFinite(v)) throw bad('a number')
      return
    case 'hidden':
      if (typeof v !== 'boolean') throw bad('a boolean')
      return
    case 'ui':
      if (!isObj(v)) throw bad('an object')
      return
    case 'uses':
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw bad('an array of strings')
      return
  }
  throw invalidField(path, `unknown or immutable part path ${path}`, { path })
}

function partOf(typeId: string, rec: MaterializedRecord): Omit<PartDef, 'datasets'> {
  const v = (rec.value ?? {}) as JsonObject
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a declaration's field as text, whatever a peer stored, the same on every peer
  const p: Omit<PartDef, 'datasets'> = { id: rec.id, typeId, key: String(v.key ?? '') }
  if (typeof v.name === 'string') p.name = v.name
  if (typeof v.icon === 'string') p.icon = v.icon
  if (typeof v.pos === 'number') p.pos = v.pos
  if (typeof v.hidden === 'boolean') p.hidden = v.hidden
  if (isObj(v.ui)) p.ui = v.ui
  if (Array.isArray(v.uses)) p.uses = v.uses.filter((x): x is string => typeof x === 'string')
  return p
}

async function liveParts(engine: SpaceEngine, typeId: string): Promise<Array<Omit<PartDef, 'datasets'> & { verId: string }>> {
  const recs = await engine.replica.listRecords(typeId, PARTS_DS)
  return recs.filter((r) => !r.deleted && r.value !== undefined).map((r) => ({ ...partOf(typeId, r), verId: r.verId }))
}

/** `GET {T}/parts`: live parts ordered by `pos` (parts without one last), then creation. */
export async function listParts(engine: SpaceEngine, typeId: string): Promise<PartDef[]> {
  getType(engine, typeId)
  if (isBuiltinType(typeId)) return []
  const parts = await liveParts(engine, typeId)
  const decls = await typeDatasets(engine, typeId)
  parts.sort((a, b) => (a.pos ?? Infinity) - (b.pos ?? Infinity) || (a.verId < b.verId ? -1 : a.verId > b.verId ? 1 : 0))
  return parts.map(({ verId: _v, ...p }) => ({ ...p, datasets: decls.filter((d) => d.partId === p.id) }))
}

async function requirePart(engine: SpaceEngine, typeId: string, partId: string) {
  const rec = await engine.replica.getRecord(typeId, PARTS_DS, partId)
  if (!rec || rec.deleted || rec.value === undefined) throw new SvcError('sdk.not_found', 'part not found', { typeId, partId })
  return partOf(typeId, rec)
}

/**
 * `POST {T}/parts` -> `{partId, datasets: [{datasetDefId, collection}]}`: the part and its
 * dataset declarations in one change. Dataset errors as in dataset-decls.ts. Call under the
 * service's mutex.
 */
export async function createPart(
  engine: SpaceEngine,
  typeId: string,
  body: PartCreateBody,
): Promise<{ partId: string; datasets: Array<{ datasetDefId: string; collection: string }> }> {
  if (!isObj(body)) throw invalidField('', 'body must be an object')
  requireUserType(engine, typeId)
  const { key, record, drafts } = checkPartCreate(body, typeId, engine.modules)
  const taken = (await liveParts(engine, typeId)).find((p) => p.key === key)
  if (taken) throw new SvcError('dataset.key_conflict', `part key ${key} is taken on this type`, { key, existingPartId: taken.id })
  assertKeysFree(await typeDatasets(engine, typeId), drafts)
  const ids = allocateDeclIds(
    await declRecords(engine, typeId),
    drafts.map((d) => d.key),
  )
  const ops: Op[] = [{ op: 'set', ds: PARTS_DS, id: CHANGE_DERIVED_ID, path: '', value: record }, ...declOps(ids, drafts, CHANGE_DERIVED_ID)]
  const res = await engine.write(typeId, ops)
  return { partId: res.recordIds[0], datasets: drafts.map((d, i) => ({ datasetDefId: ids[i], collection: d.collection })) }
}

/**
 * The body checks of `createPart` (everything but the type's existence and keys already taken
 * on it): the part's key, its record and its dataset declarations.
 */
export function checkPartCreate(body: PartCreateBody, typeId: string, modules: ModuleSet): { key: string; record: JsonObject; drafts: DeclRecord[] } {
  if (!isObj(body)) throw invalidField('', 'body must be an object')
  if (body.key === undefined) throw new SvcError('request.missing_field', 'key is required', { field: 'key' })
  if (typeof body.key !== 'string' || !DATASET_KEY_RE.test(body.key)) throw invalidField('key', 'key is [A-Za-z][A-Za-z0-9_]{0,63}')
  const key = body.key
  const record: JsonObject = { key, typeId }
  for (const f of PART_FIELDS) {
    if (body[f] === undefined) continue
    checkPartField(f, body[f])
    record[f] = body[f]
  }
  if (body.datasets !== undefined && !Array.isArray(body.datasets)) throw invalidField('datasets', 'datasets is an array of dataset declarations')
  const drafts: DeclRecord[] = ((body.datasets as unknown[] | undefined) ?? []).map((d) => checkDraft(d, { typeId, partKey: key, modules }))
  return { key, record, drafts }
}

/** `PATCH {T}/parts/:partId` with `{set, unset}` on name, icon, pos, hidden, ui (or `ui.<k>...`), uses. */
export async function patchPart(engine: SpaceEngine, typeId: string, partId: string, body: unknown): Promise<void> {
  requireUserType(engine, typeId)
  await requirePart(engine, typeId, partId)
  const { set, unset } = readSetUnset(body)
  const known = (p: string) => (PART_FIELDS as readonly string[]).includes(p) || (p.startsWith('ui.') && p.split('.').every((s) => s !== ''))
  for (const p of unset) if (!known(p)) throw invalidField(p, `unknown or immutable part path ${p}`, { path: p })
  for (const [p, v] of set) checkPartField(p, v)
  const ops: Op[] = [
    ...unset.map((path): Op => ({ op: 'unset', ds: PARTS_DS, id: partId, path })),
    ...set.map(([path, value]): Op => ({ op: 'set', ds: PARTS_DS, id: partId, path, value: value as Json })),
  ]
  await engine.write(typeId, ops)
}

/** `DELETE {T}/parts/:partId`: tombstones the part and every dataset it declares, in one change. */
export async function deletePart(engine: SpaceEngine, typeId: string, partId: string): Promise<void> {
  requireUserType(engine, typeId)
  await requirePart(engine, typeId, partId)
  const decls = (await typeDatasets(engine, typeId)).filter((d) => d.partId === partId)
  await engine.write(typeId, [{ op: 'delete', ds: PARTS_DS, id: partId }, ...decls.map((d): Op => ({ op: 'delete', ds: DATASETS_DS, id: d.id }))])
}

/** `POST {T}/parts/:partId/datasets` -> `{datasetDefId, collection}`. Call under the mutex. */
export async function addDataset(engine: SpaceEngine, typeId: string, partId: string, draft: unknown): Promise<{ datasetDefId: string; collection: string }> {
  requireUserType(engine, typeId)
  const part = await requirePart(engine, typeId, partId)
  const decl = checkDraft(draft, { typeId, partKey: part.key, modules: engine.modules })
  assertKeysFree(await typeDatasets(engine, typeId), [decl])
  const [id] = allocateDeclIds(await declRecords(engine, typeId), [decl.key])
  await engine.write(typeId, declOps([id], [decl], partId))
  return { datasetDefId: id, collection: decl.collection }
}
