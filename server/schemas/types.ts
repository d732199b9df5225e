import { Type } from '@sinclair/typebox'
import { MAX_KEY_LENGTH, MAX_NAME_LENGTH, MAX_TEXT_LENGTH } from '../../sync/core/limits.ts'
import { Id } from './spaces.ts'

/**
 * Types, properties, parts and dataset declarations (spec "Type", "Property definition",
 * "Part and dataset definition"). Bodies are strict at the top level; values whose rules have
 * their own codes (`type.xkey_required`, `property.format_invalid`, `dataset.decl_invalid`, ...)
 * are left open here and checked by the types service (sync/space/types/).
 */

const strict = { additionalProperties: false } as const
const Bag = (description = '') => Type.Object({}, { additionalProperties: true, description })

export const TypeParams = Type.Object({ spaceId: Id('space id'), typeId: Id('type id') })
export const PropertyParams = Type.Object({ spaceId: Id('space id'), typeId: Id('type id'), propId: Id('property id') })
export const PartParams = Type.Object({ spaceId: Id('space id'), typeId: Id('type id'), partId: Id('part id') })
export const DatasetDeclParams = Type.Object({ spaceId: Id('space id'), typeId: Id('type id'), datasetDefId: Id('dataset declaration id') })

export const TypesQuery = Type.Object({ includeHidden: Type.Optional(Type.Boolean()) }, strict)

export const TypeInfo = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    iconCid: Type.String(),
    xKey: Type.String(),
    weight: Type.Number(),
    layout: Type.String(),
    hidden: Type.Boolean(),
    meta: Bag('per-key bag'),
  },
  { title: 'TypeInfo' },
)

export const TypeList = Type.Object({ types: Type.Array(TypeInfo) })

const typeFields = {
  name: Type.Optional(Type.String({ maxLength: MAX_TEXT_LENGTH })),
  description: Type.Optional(Type.String({ maxLength: MAX_TEXT_LENGTH })),
  iconCid: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH })),
  weight: Type.Optional(Type.Number()),
  layout: Type.Optional(Type.String({ maxLength: MAX_KEY_LENGTH })),
  hidden: Type.Optional(Type.Boolean()),
  meta: Type.Optional(Bag('per key; null unsets a key')),
}

export const TypeCreateBody = Type.Object(
  { ...typeFields, xKey: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'required (400 type.xkey_required); unique among types' })) },
  strict,
)
export const TypePatchBody = Type.Object(typeFields, strict)

export const PropertyDef = Type.Object(
  {
    id: Type.String(),
    typeId: Type.String(),
    kind: Type.String(),
    scope: Type.String(),
    name: Type.String(),
    description: Type.String(),
    xKey: Type.Optional(Type.String()),
    meta: Bag(),
    xFormat: Bag(),
    items: Type.Optional(Bag()),
    properties: Type.Optional(Bag()),
  },
  { title: 'PropertyDef' },
)

export const PropertyList = Type.Object({ properties: Type.Array(PropertyDef) })

export const PropertyCreateBody = Type.Object(
  {
    name: Type.Optional(Type.Unknown({ description: 'required' })),
    kind: Type.Optional(Type.Unknown({ description: 'required: string, number, boolean, array, object, datetime' })),
    scope: Type.Optional(Type.Unknown({ description: 'synced (default), account, local' })),
    xKey: Type.Optional(Type.Unknown({ description: 'code-side handle, unique within the type' })),
    description: Type.Optional(Type.Unknown()),
    xFormat: Type.Optional(Type.Unknown({ description: 'descriptor: type (slug), icon, pos, options, relation, config' })),
    format: Type.Optional(Type.Unknown({ description: 'shorthand for xFormat.type' })),
    meta: Type.Optional(Type.Unknown({ description: 'meta.index: props (default), a scope, or none' })),
    items: Type.Optional(Type.Unknown({ description: 'kind array: {kind} of the elements (pinned)' })),
    properties: Type.Optional(Type.Unknown({ description: 'kind object: {name: {kind}} (pinned)' })),
  },
  strict,
)

export const PropId = Type.Object({ propId: Type.String() })

/** `{set: {path: leaf}, unset: [path]}` (properties, parts, dataset declarations). */
export const SetUnsetBody = Type.Object(
  {
    set: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    unset: Type.Optional(Type.Array(Type.String())),
  },
  strict,
)

const DatasetDecl = Bag('dataset declaration: {id, typeId, partId, key, collection, module?, shared?, idRule, fields, ...}')

export const PartDef = Type.Object(
  {
    id: Type.String(),
    typeId: Type.String(),
    key: Type.String(),
    name: Type.Optional(Type.String()),
    icon: Type.Optional(Type.String()),
    pos: Type.Optional(Type.Number()),
    hidden: Type.Optional(Type.Boolean()),
    ui: Type.Optional(Bag()),
    uses: Type.Optional(Type.Array(Type.String())),
    datasets: Type.Array(DatasetDecl),
  },
  { title: 'PartDef' },
)

export const PartList = Type.Object({ parts: Type.Array(PartDef) })

export const PartCreateBody = Type.Object(
  {
    key: Type.Optional(Type.Unknown({ description: 'required: [A-Za-z][A-Za-z0-9_]{0,63}' })),
    name: Type.Optional(Type.Unknown()),
    icon: Type.Optional(Type.Unknown()),
    pos: Type.Optional(Type.Unknown()),
    hidden: Type.Optional(Type.Unknown()),
    ui: Type.Optional(Type.Unknown()),
    uses: Type.Optional(Type.Unknown()),
    datasets: Type.Optional(Type.Unknown({ description: 'dataset drafts, declared in the part change' })),
  },
  strict,
)

export const DatasetCreated = Type.Object({ datasetDefId: Type.String(), collection: Type.String() })
export const PartCreated = Type.Object({ partId: Type.String(), datasets: Type.Array(DatasetCreated) })

/** Dataset draft: unknown draft keys are 400 `request.unknown_field`; malformed values 400 `dataset.decl_invalid`. */
export const DatasetDraftBody = Type.Object(
  {
    key: Type.Optional(Type.Unknown({ description: 'default: the part key, or the module canonical key when shared' })),
    module: Type.Optional(Type.Unknown({ description: 'editor or chat' })),
    shared: Type.Optional(Type.Unknown()),
    displayName: Type.Optional(Type.Unknown()),
    idRule: Type.Optional(Type.Unknown({ description: 'auto (default) or user' })),
    idPattern: Type.Optional(Type.Unknown({ description: 'idRule user: regular expression the whole id must match' })),
    idMaxLen: Type.Optional(Type.Unknown({ description: 'idRule user: 1..256' })),
    deleteBy: Type.Optional(Type.Unknown({ description: 'any (default) or author' })),
    search: Type.Optional(Type.Unknown()),
    dynamic: Type.Optional(Type.Unknown({ description: 'accept undeclared fields' })),
    fields: Type.Optional(Type.Unknown({ description: '{name: {type?, required?, mutableBy?, scope?, description?}}' })),
  },
  strict,
)

/** `POST {S}/properties/:objectId/set/:typeKey`: `{propId: value}` or `{patch: {propId: value}}`. */
export const PropertyValuesBody = Type.Record(Type.String(), Type.Unknown(), { description: 'propId to value (null unsets); or {patch: {...}}' })
export const PropertyValuesParams = Type.Object({ spaceId: Id('space id'), objectId: Id('object id'), typeKey: Id('core or a type id') })

export const PropertySetResult = Type.Object({
  versionId: Type.Optional(Type.String()),
  changeId: Type.Optional(Type.String()),
  recordIds: Type.Array(Type.String()),
  rejections: Type.Optional(Type.Array(Type.Object({ recordId: Type.String(), index: Type.Integer(), code: Type.String(), reason: Type.String() }))),
  scoped: Type.Optional(Type.Object({ account: Type.Optional(Type.Array(Type.String())), local: Type.Optional(Type.Array(Type.String())) })),
})

export const AttachParams = Type.Object({ spaceId: Id('space id'), objectId: Id('object id'), typeId: Id('type id') })
