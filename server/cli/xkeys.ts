import { fetchApi, type ClientContext } from './client.ts'
import { UsageError } from './io.ts'
import { terminalSafe } from './table.ts'

/**
 * Readable paths for object rows. A row keeps a type's values under `<typeId>.<propId>` (a
 * 44-character id and an 11-character one); the CLI lets a user write `note.status` (type xKey,
 * property xKey) or just `status` when one type has it, and resolves that against the space's
 * types and properties, read through the API. Ids still work as they are.
 */

export interface TypeEntry {
  id: string
  xKey: string
  name: string
  hidden: boolean
  props: { id: string; xKey?: string; name: string; kind: string }[]
}

export interface SpaceSchema {
  types: TypeEntry[]
}

/** Top-level fields of an object row that no type owns (spec ObjectRow). */
const ROW_FIELDS = new Set(['id', 'author', 'spaceId', 'createdAt', 'modifiedAt', 'modifiedBy', '_ver'])

/** Reads the space's types (hidden and built-in included) and each one's properties. */
export async function loadSchema(ctx: ClientContext, spaceId: string): Promise<SpaceSchema | number> {
  const list = await fetchApi(ctx, (c) => c.GET('/v1/spaces/{spaceId}/types', { params: { path: { spaceId }, query: { includeHidden: true } } }))
  if (!list.ok) return list.code
  const types: TypeEntry[] = []
  for (const t of list.data.types) {
    const props = await fetchApi(ctx, (c) => c.GET('/v1/spaces/{spaceId}/types/{typeId}/properties', { params: { path: { spaceId, typeId: t.id } } }))
    if (!props.ok) return props.code
    types.push({
      id: t.id,
      xKey: t.xKey,
      name: t.name,
      hidden: t.hidden,
      props: props.data.properties.map((p) => ({ id: p.id, ...(p.xKey ? { xKey: p.xKey } : {}), name: p.name, kind: p.kind })),
    })
  }
  return { types }
}

const ambiguous = (key: string, candidates: string[]) =>
  new UsageError(terminalSafe(`svc: "${key}" is ambiguous: it names ${candidates.join(', ')}; write one of those (TYPE.KEY) or the ids`))

/** One type by id, xKey, or (when no xKey matches) its name; undefined when none. */
function findType(schema: SpaceSchema, key: string): TypeEntry | undefined {
  const byId = schema.types.find((t) => t.id === key)
  if (byId) return byId
  for (const match of [(t: TypeEntry) => t.xKey === key, (t: TypeEntry) => t.name.toLowerCase() === key.toLowerCase()]) {
    const found = schema.types.filter(match)
    if (found.length > 1)
      throw ambiguous(
        key,
        found.map((t) => `type ${t.xKey} (${t.id})`),
      )
    if (found.length === 1) return found[0]
  }
  return undefined
}

/** One property of a type by id, xKey, or name. */
function findProp(type: TypeEntry, key: string) {
  const byId = type.props.find((p) => p.id === key)
  if (byId) return byId
  for (const match of [(p: TypeEntry['props'][number]) => p.xKey === key, (p: TypeEntry['props'][number]) => p.name.toLowerCase() === key.toLowerCase()]) {
    const found = type.props.filter(match)
    if (found.length > 1)
      throw ambiguous(
        `${type.xKey}.${key}`,
        found.map((p) => `${p.name} (${type.id}.${p.id})`),
      )
    if (found.length === 1) return found[0]
  }
  return undefined
}

/** A type's key in rows and in `/properties/:objectId/set/:typeKey`: its id. */
export function resolveType(schema: SpaceSchema, key: string): string {
  const t = findType(schema, key)
  if (!t) throw new UsageError(terminalSafe(`svc: no type "${key}" in this space (types: ${schema.types.map((x) => x.xKey).join(', ')})`))
  return t.id
}

/**
 * A dotted path in ids: `note.status.x` is `<typeId>.<propId>.x`; a bare `status` is the one
 * property with that key across the space's types (ambiguous when several have it). Row fields
 * (`id`, `modifiedAt`, `_ver.id`, ...) and paths nothing matches stay as written. A leading `-`
 * (descending sort) is kept.
 */
export function resolvePath(schema: SpaceSchema, path: string): string {
  if (path.startsWith('-')) return '-' + resolvePath(schema, path.slice(1))
  const [head = '', second, ...rest] = path.split('.')
  if (ROW_FIELDS.has(head)) return path
  const type = findType(schema, head)
  if (type) {
    if (second === undefined) return type.id
    const prop = findProp(type, second)
    // A built-in's row group holds fields it declares no property for (core.types).
    if (!prop && type.id === type.xKey && type.id === head) return path
    if (!prop) {
      const known = type.props.map((p) => p.xKey ?? p.id).join(', ') || 'none'
      throw new UsageError(terminalSafe(`svc: type ${type.xKey} has no property "${second}" (properties: ${known})`))
    }
    return [type.id, prop.id, ...rest].join('.')
  }
  const owners = schema.types.flatMap((t) => t.props.filter((p) => p.xKey === head || p.id === head).map((p) => ({ t, p })))
  if (owners.length > 1)
    throw ambiguous(
      head,
      owners.map(({ t, p }) => `${t.xKey}.${p.xKey ?? p.id}`),
    )
  if (owners.length === 1) return [owners[0].t.id, owners[0].p.id, ...(second !== undefined ? [second, ...rest] : [])].join('.')
  return path
}

/**
 * A filter with its field paths resolved: top-level keys and those under `$and`/`$or`/`$nor`.
 * Operator arguments are values (an `$elemMatch` body names paths inside the element) and stay.
 */
export function resolveFilter(schema: SpaceSchema, filter: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or' || key === '$nor') {
      out[key] = Array.isArray(value) ? value.map((f) => (f && typeof f === 'object' && !Array.isArray(f) ? resolveFilter(schema, f as Record<string, unknown>) : f)) : value
    } else if (key.startsWith('$')) out[key] = value
    else out[resolvePath(schema, key)] = value
  }
  return out
}

/** The readable name of a path of ids (`<typeId>.<propId>` as `note.status`), for tables. */
export function describePath(schema: SpaceSchema, path: string): string {
  const [head = '', second, ...rest] = path.split('.')
  const type = schema.types.find((t) => t.id === head)
  if (!type) return path
  const prop = second === undefined ? undefined : type.props.find((p) => p.id === second)
  return [type.xKey, ...(second === undefined ? [] : [prop?.xKey ?? prop?.name ?? second]), ...rest].join('.')
}
