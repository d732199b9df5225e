import type { FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { SvcError, type ErrorCode } from '../../sync/core/errors.ts'

/**
 * Schema validation: one Ajv (Fastify's) configured so unknown keys fail instead of being
 * trimmed and JSON bodies are never coerced ("1" is not 1). Query strings are coerced by
 * `coerceQuery` from the route's own schema, since they only ever carry strings.
 */
export const AJV_OPTIONS = {
  removeAdditional: false,
  coerceTypes: false,
  useDefaults: true,
  allErrors: false,
  /** Annotation only: the code a subschema's faults answer (see `errorCodeOn`). */
  keywords: ['x-error-code'],
}

type Json = Record<string, unknown>
interface ObjectSchema {
  type?: string | string[]
  properties?: Record<string, ObjectSchema>
  patternProperties?: Record<string, unknown>
  items?: ObjectSchema
  additionalProperties?: unknown
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** JSON pointer (`/records/0/id`) to dotted path (`records.0.id`). */
const segments = (pointer: string): string[] =>
  pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))

const dotted = (segs: string[]) => segs.join('.')

function valueAt(root: unknown, segs: string[]): unknown {
  let v = root
  for (const s of segs) v = isObject(v) || Array.isArray(v) ? (v as Json)[s] : undefined
  return v
}

function schemaAt(root: ObjectSchema | undefined, segs: string[]): ObjectSchema | undefined {
  let s = root
  for (const seg of segs) {
    if (!s) return undefined
    s = s.properties?.[seg] ?? (/^\d+$/.test(seg) ? s.items : undefined)
  }
  return s
}

function declaredKeys(schema: ObjectSchema | undefined): string[] | undefined {
  return schema?.properties ? Object.keys(schema.properties) : undefined
}

function isDeclared(schema: ObjectSchema | undefined, key: string): boolean {
  if (schema?.properties && Object.hasOwn(schema.properties, key)) return true
  return Object.keys(schema?.patternProperties ?? {}).some((p) => new RegExp(p, 'u').test(key))
}

/** The nearest `x-error-code` on the schema path down to `segs` (a module's own code for that subtree). */
function errorCodeOn(root: ObjectSchema | undefined, segs: string[]): string | undefined {
  let s = root
  let code: string | undefined
  for (let i = 0; ; i++) {
    const own = (s as Json | undefined)?.['x-error-code']
    if (typeof own === 'string') code = own
    if (!s || i === segs.length) return code
    s = s.properties?.[segs[i]] ?? (/^\d+$/.test(segs[i]) ? s.items : undefined)
  }
}

type Part = 'body' | 'querystring' | 'params' | 'headers'

/** Maps a Fastify schema validation failure to the spec's `request.*` codes. */
export function validationError(
  errors: FastifySchemaValidationError[],
  context: string | undefined,
  request: FastifyRequest,
  /** A value validated outside the route's own parts (a live route's GET form: its `q`), and its schema. */
  at?: { schema: unknown; data: unknown },
): SvcError {
  const part = (context ?? 'body') as Part
  const first = errors[0]
  if (!first) return new SvcError('request.schema', 'the request does not match the schema')
  const schema = at ? (at.schema as ObjectSchema) : (request.routeOptions.schema as Record<Part, ObjectSchema | undefined> | undefined)?.[part]
  const data = at ? at.data : part === 'body' ? request.body : part === 'querystring' ? request.query : part === 'params' ? request.params : request.headers
  const path = segments(first.instancePath)
  const params = first.params

  if (part === 'body' && path.length === 0 && first.keyword === 'type') {
    return new SvcError('request.bad_json', 'the request body must be a JSON object')
  }
  // A subschema may name the code its faults answer (`x-error-code`, e.g. chat's agent group).
  const coded = errorCodeOn(schema, path)
  if (coded) {
    const field = path.length > 0 ? dotted(path) : part
    return new SvcError(coded as ErrorCode, `${field} ${first.message ?? 'is invalid'}`, { field })
  }
  switch (first.keyword) {
    case 'additionalProperties': {
      const at = schemaAt(schema, path)
      const obj = valueAt(data, path)
      const unknown = isObject(obj) ? Object.keys(obj).filter((k) => !isDeclared(at, k)) : []
      const fields = (unknown.length > 0 ? unknown : [String(params.additionalProperty)]).map((k) => dotted([...path, k]))
      const accepted = declaredKeys(at) ?? []
      return new SvcError('request.unknown_field', `unknown field${fields.length > 1 ? 's' : ''}: ${fields.join(', ')}`, { fields, accepted })
    }
    case 'required': {
      const field = dotted([...path, String(params.missingProperty)])
      return new SvcError('request.missing_field', `${field} is required`, { field })
    }
    case 'minProperties': {
      const accepted = declaredKeys(schemaAt(schema, path)) ?? []
      const where = path.length > 0 ? `${dotted(path)} needs` : 'the request needs'
      return new SvcError('request.missing_field', `${where} at least one of: ${accepted.join(', ')}`, path.length > 0 ? { field: dotted(path), accepted } : { accepted })
    }
    default: {
      const field = path.length > 0 ? dotted(path) : part
      return new SvcError('request.invalid_field', `${field} ${first.message ?? 'is invalid'}`, { field })
    }
  }
}

/**
 * preValidation for routes whose body drops unknown top-level keys instead of failing
 * (spec: `/modify` and `/aggregate`). Their schema keeps `additionalProperties` open so the
 * OpenAPI document does not list them as strict.
 */
export function dropUnknownKeys(request: FastifyRequest): void {
  const schema = (request.routeOptions.schema as { body?: ObjectSchema } | undefined)?.body
  const body = request.body
  if (!schema?.properties || !isObject(body)) return
  for (const key of Object.keys(body)) if (!isDeclared(schema, key)) delete body[key]
}

function coerceScalar(value: string, schema: ObjectSchema | undefined): unknown {
  const types = schema?.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type]
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(value)) return Number(value)
  if (types.includes('boolean') && (value === 'true' || value === 'false')) return value === 'true'
  return value
}

/** preValidation: turns query-string values into the numbers, booleans and arrays the schema declares. */
export function coerceQuery(request: FastifyRequest): void {
  const schema = (request.routeOptions.schema as { querystring?: ObjectSchema } | undefined)?.querystring
  const query = request.query
  if (!schema?.properties || !isObject(query)) return
  for (const [key, value] of Object.entries(query)) {
    const prop = schema.properties[key]
    if (prop?.type === 'array') {
      const list = Array.isArray(value) ? value : [value]
      // eslint-disable-next-line @typescript-eslint/no-unsafe-return -- a querystring value: a string or what Fastify's parser already made of it
      query[key] = list.map((v) => (typeof v === 'string' ? coerceScalar(v, prop.items) : v))
    } else if (typeof value === 'string') {
      query[key] = coerceScalar(value, prop)
    }
  }
}
