import type { JsonObject } from '../../crdt/ops.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { allDatasetDecls } from './dataset-decls.ts'
import type { DatasetDecl, FieldType } from './model.ts'
import { Instant, jsonSchemaOf } from './record-schema.ts'

/**
 * `GET {S}/datasets`: one entry per collection, `{name, schema, owners?, module, shared?}`.
 * `schema` is a JSON Schema (2020-12) of a record with `x-scope` (`synced` or `local`) on every
 * field; declared datasets also carry `x-mutableBy` (`author`, `any`, or `once` for
 * write-once) per field and `x-idRule`. `owners` are the types whose parts declare the
 * collection (absent when none does). `module` is the serving module, null for plain
 * declared datasets. The modules' canonical collections (`editor_blocks`, `chat_messages`) are
 * always listed, `shared: true`. Order: by name.
 */
export interface DatasetListing {
  name: string
  schema: JsonObject
  owners?: string[]
  module: string | null
  shared?: boolean
}

const INSTANT_SCHEMA: JsonObject = jsonSchemaOf(Instant)

const TYPE_SCHEMA: Record<FieldType, JsonObject> = {
  string: { type: 'string' },
  number: { type: 'number' },
  integer: { type: 'integer' },
  boolean: { type: 'boolean' },
  array: { type: 'array' },
  object: { type: 'object' },
  datetime: INSTANT_SCHEMA,
  any: {},
}

const synced = (s: JsonObject): JsonObject => ({ ...s, 'x-scope': 'synced' })
const local = (s: JsonObject): JsonObject => ({ ...s, 'x-scope': 'local' })
const ID_FIELD = (extra: JsonObject = {}) => synced({ type: 'string', readOnly: true, ...extra })
const VER_FIELD = synced({ type: 'object', readOnly: true, properties: { id: { type: 'string' } } })

/** Building blocks of record schemas, for modules declaring their datasets' schemas. */
export const RECORD_SCHEMA = { synced, local, idField: ID_FIELD, verField: VER_FIELD, instant: INSTANT_SCHEMA } as const

/** JSON Schema of a declared (non-module) dataset's records. */
export function declSchema(d: DatasetDecl): JsonObject {
  const idExtra: JsonObject = {}
  if (d.idPattern !== undefined) idExtra.pattern = `^(?:${d.idPattern})$`
  if (d.idMaxLen !== undefined) idExtra.maxLength = d.idMaxLen
  const properties: JsonObject = { id: ID_FIELD(idExtra), _ver: VER_FIELD }
  const required = ['id']
  for (const [name, f] of Object.entries(d.fields)) {
    const s: JsonObject = { ...TYPE_SCHEMA[f.type ?? 'any'], 'x-scope': f.scope ?? 'synced', 'x-mutableBy': f.mutableBy ?? 'once' }
    if (f.description !== undefined) s.description = f.description
    properties[name] = s
    if (f.required) required.push(name)
  }
  const schema: JsonObject = { type: 'object', properties, required, additionalProperties: d.dynamic === true, 'x-idRule': d.idRule }
  if (d.displayName !== undefined) schema.title = d.displayName
  return schema
}

export async function listDatasets(engine: SpaceEngine): Promise<DatasetListing[]> {
  const byName = new Map<string, DatasetListing>()
  for (const k of engine.modules.allKinds()) {
    byName.set(k.canonicalCollection, { name: k.canonicalCollection, schema: k.schema, module: k.kind, shared: true })
  }
  for (const d of await allDatasetDecls(engine)) {
    let entry = byName.get(d.collection)
    if (!entry) {
      // A declaration of a kind no module here serves (a peer's newer release) lists as plain.
      const kind = d.module ? engine.modules.kind(d.module) : undefined
      entry = { name: d.collection, schema: kind ? kind.schema : declSchema(d), module: d.module ?? null }
      if (d.shared) entry.shared = true
      byName.set(d.collection, entry)
    }
    const owners = (entry.owners ??= [])
    if (!owners.includes(d.typeId)) owners.push(d.typeId)
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((e) => structuredClone(e))
}
