import { Type } from '@sinclair/typebox'
import { MAX_NAME_LENGTH, MAX_TEXT_LENGTH } from '../../sync/core/limits.ts'

/** Bodies of the one-to-one routes (spec "One-to-one and direct-add"). */

const identity = (description: string) => Type.String({ maxLength: MAX_NAME_LENGTH, description })

export const OneToOneBody = Type.Object({ otherIdentity: identity('the other account (base58 Ed25519 public key); not this account') }, { additionalProperties: false })

export const RegisterIncomingBody = Type.Object(
  {
    peerIdentity: identity('the account that started (or will start) a one-to-one with this one'),
    displayHint: Type.Optional(Type.String({ maxLength: MAX_TEXT_LENGTH, description: 'what to call the peer until its profile resolves; empty string clears' })),
  },
  { additionalProperties: false },
)
