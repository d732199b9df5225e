import { Type } from '@sinclair/typebox'
import { MAX_ITEMS_PER_REQUEST, MAX_KEY_LENGTH, MAX_NAME_LENGTH, MAX_PARTS_PER_REQUEST, MAX_TEXT_LENGTH, MAX_TYPES_PER_OBJECT } from '../../sync/core/limits.ts'
import { Instant, JsonValue } from './common.ts'
import { Id } from './spaces.ts'
import { PartCreateBody, PropertyCreateBody } from './types.ts'

/**
 * Bundles and catalog (spec "Bundle", "Bundles and catalog"). Bodies are strict at the top
 * level; the declared type's property and part drafts are left open here and checked by the
 * types service's rules (sync/space/bundles/request.ts), so their codes are the types routes'.
 */

const strict = { additionalProperties: false } as const
const Bag = (description = '') => Type.Object({}, { additionalProperties: true, description })

export const BundleParams = Type.Object({ spaceId: Id('space id'), bundleId: Id('bundle id, URL-encoded (`notes%2Fv1`)') })
export const UsecaseParams = Type.Object({ usecaseId: Id('usecase id') })

export const Bundle = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    rootId: Type.String({ description: 'the winning root object' }),
    derived: Type.Boolean(),
    typeId: Type.Optional(Type.String({ description: 'the type declared on the root (the root object is that type)' })),
    losers: Type.Array(Type.String(), { description: 'losing roots still claimed; resolve or delete them' }),
    ready: Type.Boolean({ description: 'false while the registry names a root whose row has not arrived on this replica' }),
    installedAt: Instant,
    installedBy: Type.String({ description: 'identity that claimed the winning root' }),
  },
  { title: 'Bundle' },
)

export const BundleList = Type.Object({ bundles: Type.Array(Bundle) })

export const BundleInstalled = Type.Object({
  bundle: Bundle,
  installed: Type.Boolean({ description: 'true: this call installed the root; false: an existing root was adopted' }),
})

export const BundleBody = Type.Object(
  {
    id: Type.String({ description: '`<name>/v1`; ids starting `system:` are reserved (409 bundle.reserved)' }),
    name: Type.Optional(Type.String({ maxLength: MAX_TEXT_LENGTH })),
    rootTypes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }), { maxItems: MAX_TYPES_PER_OBJECT, description: 'types the root carries' })),
    rootProperties: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), JsonValue()), { description: 'values by type key: core or a type of rootTypes' })),
    derived: Type.Optional(Type.Boolean({ description: 'root id derived from (space, bundle id), the same on every device' })),
    xKey: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'declares a type on the root (required with the other type fields)' })),
    properties: Type.Optional(
      Type.Array(PropertyCreateBody, { maxItems: MAX_ITEMS_PER_REQUEST, description: 'property drafts of the declared type (POST {T}/properties bodies)' }),
    ),
    parts: Type.Optional(Type.Array(PartCreateBody, { maxItems: MAX_PARTS_PER_REQUEST, description: 'part drafts of the declared type (POST {T}/parts bodies)' })),
    layout: Type.Optional(Type.String({ maxLength: MAX_KEY_LENGTH })),
    weight: Type.Optional(Type.Number()),
    hidden: Type.Optional(Type.Boolean()),
  },
  strict,
)

export const ResolveBody = Type.Object({ loserRootId: Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }) }, strict)

export const ChildBody = Type.Object(
  {
    seed: Type.String({ description: 'the child id is derived from (space, bundle id, seed)' }),
    types: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }), { maxItems: MAX_TYPES_PER_OBJECT, description: 'types of a child created by this call' }),
    ),
  },
  strict,
)

export const ChildCreated = Type.Object({ objectId: Type.String() })

export const Usecase = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    dependsOn: Type.Array(Type.String(), { description: 'usecases set up first' }),
    bundles: Type.Array(Bag('catalog bundle: {id, name, description, xKey, hidden?, layout?, properties?, parts?, children?}')),
  },
  { title: 'Usecase' },
)

export const UsecaseList = Type.Object({ usecases: Type.Array(Usecase) })

export const SetupBody = Type.Object({ spaceId: Id('space to set the usecase up in') }, strict)

export const SetupResult = Type.Object({
  usecase: Type.String(),
  bundles: Type.Array(
    Type.Object({
      usecase: Type.String({ description: 'usecase the bundle belongs to' }),
      id: Type.String(),
      bundle: Bundle,
      installed: Type.Boolean(),
      typeId: Type.Optional(Type.String()),
      properties: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'xKey to propId' })),
      miniapp: Type.Optional(Type.String()),
    }),
  ),
})
