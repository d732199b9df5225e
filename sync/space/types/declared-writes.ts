import type { JsonObject } from '../../crdt/ops.ts'
import { deepEqual } from '../../crdt/path.ts'
import type { UserOp } from '../../crdt/resolve.ts'
import type { WriteRejection, WriteResult } from '../../replica/types.ts'
import { asStringArray } from '../rows.ts'
import type { ModifyBody, SpaceEngine } from '../space-engine.ts'
import { declarationsOf } from './dataset-decls.ts'
import { mutableField, writableField, type FieldProblem } from './field-rules.ts'
import { isObj, type DatasetDecl } from './model.ts'

/**
 * The per-field rules of a declared dataset hold on every write path, not only on upsert:
 * otherwise `/modify` would rewrite a write-once field and `/delete-records` would delete
 * another member's record in an `author`-only dataset. Same rules and codes as upsert
 * (upsert.ts): a stamped field (`id`, `_*`) or an undeclared field of a non-dynamic dataset
 * is `upsert.rejected`; a write-once field (no `mutableBy`) that already holds a value is
 * `upsert.immutable_field`; a `mutableBy: author` field written by anyone but the record's
 * creator, or a record of a `deleteBy: author` dataset deleted by anyone else, is
 * `upsert.not_author`. Offending ops are dropped and listed in `rejections`; the rest of the
 * request is written (the partial success of `/modify`).
 *
 * Datasets no type declares, and module-served ones (the module owns their rules), are free.
 * The check reads local state before the write: like upsert, it is a guard of this device's
 * writes, not a merge rule, so concurrent writers are outside it (spec "Upsert per-record
 * rules" 6).
 */
export async function modifyDeclared(engine: SpaceEngine, body: ModifyBody): Promise<WriteResult> {
  const readOnly = moduleReadOnlyFields(engine, body.dataset)
  if (readOnly) return modifyModuleServed(engine, body, readOnly)
  const decl = await governingDecl(engine, body.objectId, body.dataset)
  if (!decl) return engine.modify(body)
  return screenedModify(engine, body, (op, value, creator) => fieldProblem(decl, op, value, creator, engine.replica.me))
}

export async function deleteRecordsDeclared(engine: SpaceEngine, body: { objectId: string; dataset: string; recordIds: string[] }): Promise<WriteResult> {
  const decl = await governingDecl(engine, body.objectId, body.dataset)
  if (decl?.deleteBy !== 'author') return engine.deleteRecords(body)
  const rejections: WriteRejection[] = []
  const allowed: string[] = []
  for (const [index, id] of body.recordIds.entries()) {
    const cur = await engine.replica.getRecord(body.objectId, body.dataset, id)
    if (cur && !cur.deleted && cur.created.a !== engine.replica.me) {
      rejections.push({ recordId: id, index, code: 'upsert.not_author', reason: "only the record's creator may delete it" })
    } else allowed.push(id)
  }
  if (allowed.length === 0) return { versionId: engine.replica.versionId(), changeId: '', recordIds: [], rejections }
  const res = await engine.deleteRecords({ ...body, recordIds: allowed })
  if (rejections.length) res.rejections = [...rejections, ...(res.rejections ?? [])]
  return res
}

/**
 * Fields a module's record schema marks `readOnly` (stamped by its service or computed by the
 * engine, such as chat's `creator` and `unread`), for the module's canonical collection; undefined
 * for any other dataset.
 */
function moduleReadOnlyFields(engine: SpaceEngine, dataset: string): Set<string> | undefined {
  const kind = engine.modules.allKinds().find((k) => k.canonicalCollection === dataset)
  if (!kind) return undefined
  const props = isObj(kind.schema.properties) ? kind.schema.properties : {}
  return new Set(
    Object.entries(props)
      .filter(([, p]) => isObj(p) && p.readOnly === true)
      .map(([name]) => name),
  )
}

/** `/modify` on a module-served collection: ops writing a read-only field are dropped (`upsert.rejected`, a stamped field). */
async function modifyModuleServed(engine: SpaceEngine, body: ModifyBody, readOnly: Set<string>): Promise<WriteResult> {
  engine.requireObject(body.objectId)
  return screenedModify(engine, body, (op, value) => {
    const field = touchedFields(op, value).find((f) => readOnly.has(f))
    return field ? { code: 'upsert.rejected', reason: `${field} is written by the server or computed by the engine, never by a client` } : undefined
  })
}

/** The declaration whose rules a write to `dataset` of this object follows, if any (404 `object.not_found` first). */
export async function governingDecl(engine: SpaceEngine, objectId: string, dataset: string): Promise<DatasetDecl | undefined> {
  const row = engine.requireObject(objectId)
  const decls = await declarationsOf(engine, dataset)
  if (decls.length === 0) return undefined
  const carried = asStringArray((row.core as JsonObject | undefined)?.types)
  const decl = decls.find((d) => carried.includes(d.typeId))
  return decl && !decl.module ? decl : undefined
}

/** Top-level fields an op would change, given the record's current value. */
export function touchedFields(op: UserOp, value: JsonObject | undefined): string[] {
  if (op.path !== '') return [op.path.split('.')[0]]
  const next = op.type === '$set' && isObj(op.value) ? op.value : {}
  const names = new Set([...Object.keys(next), ...Object.keys(value ?? {})])
  return [...names].filter((n) => !deepEqual(next[n], value?.[n]))
}

function fieldProblem(decl: DatasetDecl, op: UserOp, value: JsonObject | undefined, creator: string | undefined, writer: string): FieldProblem {
  for (const name of touchedFields(op, value)) {
    const problem = writableField(decl, name) ?? (value ? mutableField(decl, name, value[name] !== undefined, creator, writer) : undefined)
    if (problem) return problem
  }
  return undefined
}

/**
 * `/modify` with each op screened against the record as it stands: ops `problemOf` names are
 * dropped and listed in `rejections`, the rest is written (the partial success of `/modify`).
 */
async function screenedModify(
  engine: SpaceEngine,
  body: ModifyBody,
  problemOf: (op: UserOp, value: JsonObject | undefined, creator: string | undefined) => Omit<WriteRejection, 'recordId' | 'index'> | undefined,
): Promise<WriteResult> {
  const rejections: WriteRejection[] = []
  const records: ModifyBody['records'] = []
  for (const rec of body.records) {
    const cur = await engine.replica.getRecord(body.objectId, body.dataset, rec.id)
    const value = cur && !cur.deleted && isObj(cur.value) ? cur.value : undefined
    const creator = value ? cur!.created.a : undefined
    const ops: UserOp[] = []
    rec.ops.forEach((op, index) => {
      const problem = problemOf(op, value, creator)
      if (problem) rejections.push({ recordId: rec.id, index, ...problem })
      else ops.push(op)
    })
    if (ops.length) records.push({ ...rec, ops })
  }
  if (records.length === 0) return { versionId: engine.replica.versionId(), changeId: '', recordIds: [], rejections }
  const res = await engine.modify({ ...body, records })
  if (rejections.length) res.rejections = [...rejections, ...(res.rejections ?? [])]
  return res
}
