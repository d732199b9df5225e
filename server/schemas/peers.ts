import { Type } from '@sinclair/typebox'
import { P2P } from '../../sync/p2p/constants.ts'
import { Instant } from './common.ts'

/** Body of `POST /v1/peers`. */
export const PeerAdd = Type.Object(
  {
    multiaddr: Type.String({
      minLength: 1,
      maxLength: P2P.maxMultiaddrLength,
      description: 'where the peer listens, with its peer id: /ip4|ip6|dns|dns4|dns6/<host>/tcp/<port>/p2p/<peer id>',
    }),
  },
  { additionalProperties: false },
)

export const PeerParams = Type.Object({
  peerId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[1-9A-HJ-NP-Za-km-z]+$', description: 'libp2p peer id' }),
})

/** A peer added by address (node/p2p/added-peers.ts PeerRecord). */
export const PeerRecord = Type.Object(
  {
    peerId: Type.String(),
    multiaddr: Type.String(),
    source: Type.Union([Type.Literal('api'), Type.Literal('config')], { description: 'added over the API (kept) or named by the `peers` setting (this run)' }),
    addedAt: Instant,
    connected: Type.Boolean(),
    identity: Type.Union([Type.String(), Type.Null()], { description: 'the account it proved on the link' }),
    failures: Type.Integer({ minimum: 0, description: 'dials that failed since it was last connected' }),
    lastError: Type.Union([Type.String(), Type.Null()]),
    nextDialAt: Type.Union([Instant, Type.Null()]),
  },
  { $id: 'PeerRecord', title: 'PeerRecord' },
)

export const PeerList = Type.Object({ peers: Type.Array(PeerRecord) })
