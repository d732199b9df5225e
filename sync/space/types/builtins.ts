import { SvcError } from '../../core/errors.ts'
import { BUILTIN_TYPES } from '../schema.ts'
import type { PropertyDef, TypeInfo } from './model.ts'

/**
 * Built-in types are static release definitions, identical on every device and never stored:
 * `core` (the universal group every object has), `spaceIndex`, `type`, then the registered
 * hidden ones (`dataview`, `page`, `miniapp`, `bin`). A built-in's xKey is its id. Their
 * definitions cannot change: PATCH, property and part changes answer 400 `type.registered`
 * (the spec's code for registered built-ins; svc applies it to every built-in, since none has
 * a stored definition to change).
 */
export const BUILTIN_TYPE_INFOS: readonly TypeInfo[] = BUILTIN_TYPES.map((t) => ({
  id: t.id,
  name: t.name,
  description: '',
  iconCid: '',
  xKey: t.id,
  weight: 0,
  layout: '',
  hidden: t.hidden,
  meta: {},
}))

const byId = new Map(BUILTIN_TYPE_INFOS.map((t) => [t.id, t]))

export const builtinType = (id: string): TypeInfo | undefined => byId.get(id)
export const isBuiltinType = (id: string): boolean => byId.has(id)

const coreProp = (id: string, name: string, kind: PropertyDef['kind'], slug: string): PropertyDef => ({
  id,
  typeId: 'core',
  kind,
  scope: 'synced',
  name,
  description: '',
  xKey: id,
  meta: {},
  xFormat: { type: slug },
})

/** The universal properties of `core`, with readable ids (spec PropertyDef, id row). */
export const CORE_PROPERTIES: readonly PropertyDef[] = [
  coreProp('name', 'Name', 'string', 'text'),
  coreProp('description', 'Description', 'string', 'text'),
  coreProp('icon', 'Icon', 'string', 'text'),
  coreProp('tags', 'Tags', 'array', 'tags'),
]

/** Static property definitions of a built-in type (only `core` has any). */
export const builtinProperties = (typeId: string): readonly PropertyDef[] => (typeId === 'core' ? CORE_PROPERTIES : [])

export function frozen(typeId: string): SvcError {
  return new SvcError('type.registered', 'definitions of built-in types are frozen', { typeId })
}
