import { Type } from '@sinclair/typebox'
import { MAX_ITEMS_PER_REQUEST, MAX_KEY_LENGTH, MAX_NAME_LENGTH, MAX_TEXT_LENGTH } from '../../sync/core/limits.ts'
import { Instant } from './common.ts'

/** Path and body schemas of the account, identity and space routes (spec "Space", "Identity"). */

export const Id = (description: string) => Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, description })

export const SpaceParams = Type.Object({ spaceId: Id('space id') })

export const STATUSES = ['active', 'joining', 'deleted', 'one_to_one_pending', 'invite_pending', 'guest_revoked'] as const

export const SpaceStatus = Type.Union(STATUSES.map((s) => Type.Literal(s)))

/** SpaceInfo. */
export const SpaceInfo = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    iconCid: Type.String(),
    spaceIndexObjectId: Type.String({ description: 'the object owning name, description and icon; empty for a row not held locally' }),
    createdAt: Instant,
    spaceType: Type.Union([Type.Literal('svc.space'), Type.Literal('svc.onetoone')]),
    author: Type.String(),
    ownRole: Type.Union(['owner', 'admin', 'writer', 'reader', 'guest', 'none'].map((r) => Type.Literal(r))),
    settings: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])),
    push: Type.Optional(Type.Object({ spaceKey: Type.String(), encKey: Type.String(), encKeyId: Type.String() })),
    derived: Type.Boolean(),
    status: SpaceStatus,
  },
  { title: 'SpaceInfo' },
)

const text = (description: string) => Type.String({ maxLength: MAX_TEXT_LENGTH, description })

export const SpaceCreateBody = Type.Object(
  { name: text('display name'), description: Type.Optional(text('')), iconCid: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH })) },
  { additionalProperties: false },
)

/** PATCH {S} and PUT /v1/account/metadata: absent keeps, empty string clears, at least one field. */
export const NameFields = Type.Object(
  { name: Type.Optional(text('')), description: Type.Optional(text('')), iconCid: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH })) },
  { additionalProperties: false, minProperties: 1 },
)

export const SpaceListQuery = Type.Object(
  { status: Type.Optional(Type.Union([Type.Literal('all'), SpaceStatus], { description: 'all or one status; default active' })) },
  { additionalProperties: false },
)

export const SettingsBody = Type.Object(
  {
    set: Type.Optional(Type.Record(Type.String({ maxLength: MAX_KEY_LENGTH }), Type.Unknown({ description: 'scalar' }))),
    unset: Type.Optional(Type.Array(Type.String({ maxLength: MAX_KEY_LENGTH }), { maxItems: MAX_ITEMS_PER_REQUEST })),
  },
  { additionalProperties: false },
)

export const DerivedSpaces = Type.Object({
  spaces: Type.Array(Type.Object({ name: Type.String(), spaceId: Type.String(), created: Type.Boolean(), status: Type.Optional(SpaceStatus) })),
})

export const DerivedParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: MAX_KEY_LENGTH }) })

const Schema = Type.Object({}, { additionalProperties: true, description: 'JSON Schema (2020-12) with x-scope per field' })

export const DatasetListing = Type.Object({
  datasets: Type.Array(
    Type.Object({
      name: Type.String(),
      schema: Schema,
      owners: Type.Optional(Type.Array(Type.String())),
      module: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      shared: Type.Optional(Type.Boolean()),
    }),
  ),
})

// ------------------------------------------------------------------ account and identities

export const Account = Type.Object({
  accountId: Type.String(),
  name: Type.String(),
  description: Type.String(),
  iconCid: Type.String(),
})

export const IdentityInfo = Type.Object(
  {
    identity: Type.String(),
    name: Type.Optional(Type.String({ description: 'empty until a key to read the profile arrives' })),
    description: Type.Optional(Type.String()),
    iconCid: Type.Optional(Type.String()),
    spaceIds: Type.Array(Type.String(), { description: 'spaces where this identity is a member' }),
  },
  { title: 'IdentityInfo' },
)

export const IdentityParams = Type.Object({ identity: Id('identity (base58 public key)') })
