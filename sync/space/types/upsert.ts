import { SvcError } from '../../core/errors.ts'
import { DEFAULT_UPSERT_PAGE_SIZE, LIMITS, MAX_UPSERT_PAGE_SIZE } from '../../core/limits.ts'
import { checkValue, type Json, type JsonObject, type Op } from '../../crdt/ops.ts'
import { deepEqual } from '../../crdt/path.ts'
import type { WriteResult } from '../../replica/types.ts'
import { asStringArray } from '../rows.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { declarationsOf } from './dataset-decls.ts'
import { mutableField, writableField } from './field-rules.ts'
import { instantMs } from './formats.ts'
import { invalidField, isObj, type DatasetDecl, type FieldDecl } from './model.ts'

/**
 * `POST {S}/upsert` (spec "Modify and upsert bodies"):
 * `{objectId, dataset, records: [{id, fields}], pageSize?, traceIds?}` ->
 * `{pages: [WriteResult], created, updated, skipped, rejections: [{index, id, code, reason}]}`.
 *
 * Request errors, in this order: 400 `object.id_required`, 404 `object.not_found`, 400
 * `dataset.unknown` (no type declares the collection), 400 `upsert.requires_user_ids` (not
 * `idRule: user`), 400 `dataset.not_declared` (the object carries none of the owning types),
 * 400 `request.invalid_field` (records, pageSize 1..10000, traceIds).
 *
 * Per record (rejections are 200-response entries, the record is all or nothing):
 * 1. id absent: created by one whole-record set of `fields`;
 * 2. id present: each changed field is one single-path set; unchanged fields write nothing;
 *    write-once fields (no `mutableBy`) may be filled once when absent, never rewritten
 *    (`upsert.immutable_field`); `mutableBy: author` fields only by the record's creator
 *    (`upsert.not_author`); fields left out of `fields` are kept;
 * 3. id present, nothing differs: skipped;
 * 4. id tombstoned: `upsert.record_deleted`;
 * 5. `upsert.rejected`: id not a non-empty string, over `idMaxLen` (default 256) or not fully
 *    matching `idPattern`; `fields` not an object or not storable JSON; a required field missing
 *    (or null) on creation; an undeclared field on a non-dynamic dataset; a write to a stamped
 *    field (`id`, or any name starting with `_`: `_ver`, `_traces`, `_deletedAt`, ...); a value
 *    not of its declared field type (null is accepted for non-required fields).
 * Pages of `pageSize` records (default 500) are one change each (split further only past the
 * per-change op limit); a page where nothing changed writes no change and adds no entry to
 * `pages`. A record id repeated in one request sees the earlier occurrence's effect.
 */
export interface UpsertBody {
  objectId?: unknown
  dataset?: unknown
  records?: unknown
  pageSize?: unknown
  traceIds?: unknown
}

export interface UpsertRejection {
  index: number
  id: string
  code: 'upsert.immutable_field' | 'upsert.not_author' | 'upsert.record_deleted' | 'upsert.rejected'
  reason: string
}

export interface UpsertResult {
  pages: WriteResult[]
  created: number
  updated: number
  skipped: number
  rejections: UpsertRejection[]
}

export const UPSERT_DEFAULT_PAGE_SIZE = DEFAULT_UPSERT_PAGE_SIZE
const MAX_PAGE_SIZE = MAX_UPSERT_PAGE_SIZE

function typeMatches(f: FieldDecl, v: Json): boolean {
  if (v === null) return !f.required
  switch (f.type ?? 'any') {
    case 'string':
      return typeof v === 'string'
    case 'number':
      return typeof v === 'number'
    case 'integer':
      return typeof v === 'number' && Number.isSafeInteger(v)
    case 'boolean':
      return typeof v === 'boolean'
    case 'array':
      return Array.isArray(v)
    case 'object':
      return isObj(v)
    case 'datetime':
      return instantMs(v) !== undefined
    default:
      return true
  }
}

interface Known {
  value?: JsonObject
  deleted: boolean
  creator?: string
}

type Outcome = { kind: 'rejected'; code: UpsertRejection['code']; reason: string } | { kind: 'skipped' } | { kind: 'write'; created: boolean; ops: Op[]; next: JsonObject }

function screen(decl: DatasetDecl, ds: string, id: string, fields: JsonObject, known: Known, writer: string): Outcome {
  const reject = (code: UpsertRejection['code'], reason: string): Outcome => ({ kind: 'rejected', code, reason })
  if (known.deleted) return reject('upsert.record_deleted', 'the record was deleted')
  for (const [name, v] of Object.entries(fields)) {
    const problem = writableField(decl, name)
    if (problem) return reject(problem.code, problem.reason)
    const f = decl.fields[name]
    if (f && !typeMatches(f, v)) return reject('upsert.rejected', `field ${name} must be ${f.type}`)
  }
  if (!known.value) {
    for (const [name, f] of Object.entries(decl.fields)) {
      if (f.required && (fields[name] === undefined || fields[name] === null)) return reject('upsert.rejected', `missing required field ${name}`)
    }
    return { kind: 'write', created: true, ops: [{ op: 'set', ds, id, path: '', value: fields }], next: fields }
  }
  const ops: Op[] = []
  const next: JsonObject = { ...known.value }
  for (const [name, v] of Object.entries(fields)) {
    const cur = known.value[name]
    if (cur !== undefined && deepEqual(cur, v)) continue
    const problem = mutableField(decl, name, cur !== undefined, known.creator, writer)
    if (problem) return reject(problem.code, problem.reason)
    ops.push({ op: 'set', ds, id, path: name, value: v })
    next[name] = v
  }
  return ops.length ? { kind: 'write', created: false, ops, next } : { kind: 'skipped' }
}

function checkId(decl: DatasetDecl, id: unknown): string | undefined {
  if (typeof id !== 'string' || id === '') return 'id must be a non-empty string'
  const max = decl.idMaxLen ?? 256
  if (id.length > max) return `id is longer than ${max}`
  if (decl.idPattern !== undefined && !new RegExp(`^(?:${decl.idPattern})$`).test(id)) return 'id does not match the dataset idPattern'
  return undefined
}

/** Finds the declaration an upsert writes through (see the request errors above). */
export async function upsertTarget(engine: SpaceEngine, objectId: unknown, dataset: unknown): Promise<DatasetDecl> {
  if (objectId === undefined || objectId === null || objectId === '') throw new SvcError('object.id_required', 'objectId is required')
  if (typeof objectId !== 'string') throw invalidField('objectId', 'objectId must be a string')
  const row = engine.requireObject(objectId)
  if (typeof dataset !== 'string' || dataset === '') throw new SvcError('dataset.unknown', 'dataset is required', { dataset: dataset ?? null })
  const decls = await declarationsOf(engine, dataset)
  if (decls.length === 0) throw new SvcError('dataset.unknown', 'no type declares this dataset', { dataset })
  if (!decls.some((d) => d.idRule === 'user')) throw new SvcError('upsert.requires_user_ids', 'upsert needs a dataset declared with idRule: user', { dataset })
  const carried = asStringArray((row.core as JsonObject | undefined)?.types)
  const decl = decls.find((d) => d.idRule === 'user' && carried.includes(d.typeId))
  if (!decl) throw new SvcError('dataset.not_declared', 'the object carries no type declaring this dataset', { dataset, objectId, owners: decls.map((d) => d.typeId) })
  return decl
}

export async function upsert(engine: SpaceEngine, body: UpsertBody): Promise<UpsertResult> {
  if (!isObj(body)) throw invalidField('', 'body must be an object')
  const decl = await upsertTarget(engine, body.objectId, body.dataset)
  const objectId = body.objectId as string
  const ds = body.dataset as string
  if (!Array.isArray(body.records)) throw invalidField('records', 'records must be an array of {id, fields}')
  const pageSize = body.pageSize ?? UPSERT_DEFAULT_PAGE_SIZE
  if (typeof pageSize !== 'number' || !Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE)
    throw invalidField('pageSize', `pageSize is an integer from 1 to ${MAX_PAGE_SIZE}`)
  let traceIds: string[] | undefined
  if (body.traceIds !== undefined) {
    if (!Array.isArray(body.traceIds) || !body.traceIds.every((t) => typeof t === 'string' && t.length <= 256)) throw invalidField('traceIds', 'traceIds is an array of strings')
    traceIds = body.traceIds as string[]
  }
  const records = body.records as unknown[]
  const writer = engine.replica.me
  const result: UpsertResult = { pages: [], created: 0, updated: 0, skipped: 0, rejections: [] }
  const pending = new Map<string, Known>()

  for (let start = 0; start < records.length; start += pageSize) {
    let ops: Op[] = []
    const flush = async () => {
      if (ops.length === 0) return
      result.pages.push(await engine.write(objectId, ops, traceIds))
      ops = []
    }
    for (let index = start; index < Math.min(records.length, start + pageSize); index++) {
      const r = records[index]
      const rid = isObj(r) && typeof r.id === 'string' ? r.id : ''
      const reject = (code: UpsertRejection['code'], reason: string) => result.rejections.push({ index, id: rid, code, reason })
      if (!isObj(r)) {
        reject('upsert.rejected', 'a record is {id, fields}')
        continue
      }
      const idProblem = checkId(decl, r.id)
      if (idProblem) {
        reject('upsert.rejected', idProblem)
        continue
      }
      if (!isObj(r.fields)) {
        reject('upsert.rejected', 'fields must be an object')
        continue
      }
      try {
        checkValue(r.fields)
      } catch {
        reject('upsert.rejected', 'fields are not storable JSON')
        continue
      }
      let known = pending.get(rid)
      if (!known) {
        const rec = await engine.replica.getRecord(objectId, ds, rid)
        known = rec ? { deleted: rec.deleted, value: isObj(rec.value) ? rec.value : undefined, creator: rec.created.a } : { deleted: false }
      }
      const out = screen(decl, ds, rid, r.fields, known, writer)
      if (out.kind === 'rejected') {
        reject(out.code, out.reason)
        continue
      }
      if (out.kind === 'skipped') {
        result.skipped++
        continue
      }
      if (ops.length + out.ops.length > LIMITS.maxOpsPerChange) await flush()
      ops.push(...out.ops)
      pending.set(rid, { deleted: false, value: out.next, creator: known.value ? known.creator : writer })
      if (out.created) result.created++
      else result.updated++
    }
    await flush()
  }
  return result
}
