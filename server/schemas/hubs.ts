import { Type } from '@sinclair/typebox'
import { HUB_WIRE, SPACE_CODES } from '../../sync/protocol/hub-wire.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { Instant } from './common.ts'

/** Body of `POST /v1/hubs`. */
export const HubAdd = Type.Object(
  {
    multiaddr: Type.String({
      minLength: 1,
      maxLength: P2P.maxMultiaddrLength,
      description: 'where the hub listens, with its peer id: /ip4|ip6|dns|dns4|dns6/<host>/tcp/<port>/p2p/<peer id>',
    }),
    token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: HUB_WIRE.maxTokenBytes,
        pattern: '^[1-9A-HJ-NP-Za-km-z]+$',
        description: 'an admission token the hub operator minted for this account (`svc hub admit`)',
      }),
    ),
  },
  { additionalProperties: false },
)

export const HubParams = Type.Object({
  peerId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[1-9A-HJ-NP-Za-km-z]+$', description: "the hub's libp2p peer id" }),
})

const SpaceState = Type.Union(
  [...SPACE_CODES, 'unknown', 'unregistered'].map((c) => Type.Literal(c)),
  {
    description: 'kept; pending (kept, its ACL not yet shown to include us); not_reader; over_spaces, over_bytes, rate_limited (quotas); released; unregistered (not answered yet)',
  },
)

export const HubSpaceState = Type.Object({ spaceId: Type.String(), state: SpaceState, lastSyncAt: Type.Union([Instant, Type.Null()]) })

/** A hub of this account (node/hubs/hub-links.ts HubRecord). */
export const HubRecord = Type.Object(
  {
    peerId: Type.String(),
    multiaddr: Type.String(),
    source: Type.Union([Type.Literal('api'), Type.Literal('config')]),
    addedAt: Instant,
    connected: Type.Boolean(),
    identity: Type.Union([Type.String(), Type.Null()], { description: 'the identity the hub proved on head sync' }),
    admission: Type.Union([Type.Literal('ok'), Type.Literal('not_admitted'), Type.Literal('bad_token'), Type.Literal('unknown'), Type.Null()], {
      description: 'whether the hub admits this account (null until it answered)',
    }),
    usage: Type.Union([Type.Object({ spaces: Type.Integer(), bytes: Type.Integer(), maxSpaces: Type.Integer(), maxBytes: Type.Integer() }), Type.Null()]),
    failures: Type.Integer({ minimum: 0 }),
    lastError: Type.Union([Type.String(), Type.Null()]),
    nextDialAt: Type.Union([Instant, Type.Null()]),
    spaces: Type.Array(HubSpaceState),
  },
  { $id: 'HubRecord', title: 'HubRecord' },
)

export const HubList = Type.Object({ hubs: Type.Array(HubRecord) })
