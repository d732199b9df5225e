import { ed25519 } from '@noble/curves/ed25519.js'
import { encodeCanonical, utf8 } from '../core/encoding.ts'
import { fromBase58 } from '../core/ids.ts'

/** Domain tag: a join proof can never be mistaken for any other signature the invite key makes. */
const JOIN_PROOF_DOMAIN = 'svc/acl/join-proof/v1'

/**
 * The bytes an invite key signs to let `joiner` ask to join `spaceId` through invite record
 * `inviteId`: a canonical encoding of the tag and the three ids, so a proof is bound to one
 * space, one joining account and one invite (a proof seen on the wire cannot be replayed by
 * another account, or against another invite or space).
 */
export function joinProofBytes(spaceId: string, joiner: string, inviteId: string): Uint8Array {
  return encodeCanonical([utf8(JOIN_PROOF_DOMAIN), spaceId, joiner, inviteId])
}

export function signJoinProof(invitePrivateKey: Uint8Array, spaceId: string, joiner: string, inviteId: string): Uint8Array {
  return ed25519.sign(joinProofBytes(spaceId, joiner, inviteId), invitePrivateKey)
}

/**
 * Whether `proof` is the invite key's (`inviteKey`, base58) signature for this join. Synchronous:
 * the ACL admits records synchronously, and joins are rare (each needs an invite token).
 */
export function verifyJoinProof(inviteKey: string, proof: Uint8Array, spaceId: string, joiner: string, inviteId: string): boolean {
  try {
    const pub = fromBase58(inviteKey)
    return pub.length === 32 && ed25519.verify(proof, joinProofBytes(spaceId, joiner, inviteId), pub)
  } catch {
    return false
  }
}
