import { Type } from '@sinclair/typebox'
import { MAX_NAME_LENGTH, MAX_TEXT_LENGTH, SHARING_LIMITS } from '../../sync/core/limits.ts'
import { Id } from './spaces.ts'

/** Schemas of the invite, join, member and ACL routes (spec "Invites and guest key", docs/api.md "Sharing"). */

const Identity = Id('identity (base58 Ed25519 public key)')

export const MemberParams = Type.Object({ spaceId: Id('space id'), identity: Identity })
export const InviteParams = Type.Object({ spaceId: Id('space id'), recordId: Id('invite record id') })

const Role = Type.Union(['owner', 'admin', 'writer', 'reader', 'guest', 'none'].map((r) => Type.Literal(r)))
/** What a direct add or a role change grants (the owner alone grants admin). */
export const Grantable = Type.Union([Type.Literal('reader'), Type.Literal('writer'), Type.Literal('admin')])

export const MemberRecord = Type.Object(
  {
    identity: Type.String(),
    role: Role,
    status: Type.Union(
      ['active', 'pending', 'invited', 'declined', 'cancelled', 'removed'].map((s) => Type.Literal(s)),
      {
        description:
          'active: holds a role; pending: a join request awaiting a manager; invited: added directly, not accepted yet (own record only); declined, cancelled: a settled request; removed: role none now',
      },
    ),
    name: Type.String({ description: "the join request's metadata until the member's profile is readable" }),
    iconCid: Type.String(),
    self: Type.Boolean({ description: 'this account' }),
    request: Type.Optional(
      Type.Object({
        recordId: Type.String({ description: 'the join record: what acl/accept and acl/decline name' }),
        permission: Type.String(),
        status: Type.Union(['pending', 'accepted', 'declined', 'cancelled'].map((s) => Type.Literal(s))),
      }),
    ),
  },
  { title: 'MemberRecord' },
)

export const MemberList = Type.Object({ members: Type.Array(MemberRecord) })

export const MemberListQuery = Type.Object(
  { status: Type.Optional(Type.Literal('all', { description: 'also removed members and settled requests; default active and pending' })) },
  { additionalProperties: false },
)

export const RoleBody = Type.Object({ role: Grantable }, { additionalProperties: false })

export const AclAddBody = Type.Object(
  {
    identities: Type.Array(Identity, { minItems: 1, maxItems: SHARING_LIMITS.maxAddPerRequest }),
    permission: Grantable,
  },
  { additionalProperties: false },
)

export const AclAddResult = Type.Object({
  added: Type.Array(Type.String()),
  unchanged: Type.Array(Type.String(), { description: 'already members: their role is left as it is' }),
})

/** Names one join request: by its record id, or by the identity that asked (its newest request). */
export const RequestBody = Type.Object(
  { request: Type.Optional(Id('join record id (MemberRecord.request.recordId)')), identity: Type.Optional(Identity) },
  { additionalProperties: false, minProperties: 1, maxProperties: 1 },
)

const Metadata = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: MAX_TEXT_LENGTH })), iconCid: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH })) },
  { additionalProperties: false, description: "seeds the joiner's displayed name and icon on the owner's side" },
)

export const JoinBody = Type.Object(
  { inviteToken: Type.String({ description: 'an invite or guest token; anything malformed is 400 invite.invalid' }), metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
)

export const InviteCreateBody = Type.Object(
  { permission: Type.Optional(Type.Union([Type.Literal('reader'), Type.Literal('writer')], { description: 'default reader' })) },
  { additionalProperties: false },
)

export const InviteToken = Type.Object({ spaceId: Type.String(), inviteToken: Type.String() })

export const InviteRecord = Type.Object(
  {
    recordId: Type.String(),
    permission: Type.String({ description: 'reader, writer or guest' }),
    inviteToken: Type.Optional(Type.String({ description: "only on the minting account's devices" })),
  },
  { title: 'InviteRecord' },
)

export const InviteList = Type.Object({ invites: Type.Array(InviteRecord) })
