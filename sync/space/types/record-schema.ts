import { FormatRegistry, Type, type ObjectOptions, type TObject, type TSchema } from '@sinclair/typebox'
import type { JsonObject } from '../../crdt/ops.ts'
import { isJsonObject } from '../rows.ts'

/**
 * Record schemas in TypeBox. A module writes its record's shape once; from it come the JSON
 * Schema `GET {S}/datasets` lists (`datasetSchemaOf`), the HTTP bodies built from the same fields,
 * the static type (`Static<>`) and, through `Value.Check`, a guard for documents read back.
 */

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i
// Value.Check answers false for a format it has no checker for, so an instant would never pass.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => RFC3339.test(v))

/** The spec's instant wrapper, `{$date}`; `options` annotate the field (readOnly, description). */
export const instant = (options: ObjectOptions = {}) => Type.Object({ $date: Type.String({ format: 'date-time' }) }, { additionalProperties: false, ...options })
export const Instant = instant()

/** A field computed on this device, never replicated (`x-scope: local`); every other field of a record is synced. */
export const local = <T extends TSchema>(field: T): T => ({ ...field, 'x-scope': 'local' })

/** A TypeBox schema as the plain JSON Schema a listing serves (TypeBox's own symbol keys left out). */
export function jsonSchemaOf(schema: TSchema): JsonObject {
  const plain: unknown = JSON.parse(JSON.stringify(schema))
  if (!isJsonObject(plain)) throw new TypeError('a record schema is a JSON object')
  return plain
}

/**
 * The JSON Schema of a record as `GET {S}/datasets` lists it: every field carries `x-scope`,
 * `synced` unless the record marks it `local`.
 */
export function datasetSchemaOf(record: TObject): JsonObject {
  const schema = jsonSchemaOf(record)
  const properties = isJsonObject(schema.properties) ? schema.properties : {}
  for (const field of Object.values(properties)) if (isJsonObject(field) && field['x-scope'] === undefined) field['x-scope'] = 'synced'
  return schema
}
