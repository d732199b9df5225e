import { SvcError } from '../core/errors.ts'
import { fromBase58, toBase58 } from '../core/ids.ts'

/**
 * An invite token: base58 of `kind || spaceId || inviteId || seed`, 97 bytes.
 * - `kind`: 1 for a member invite (reader or writer), 2 for a guest key, so the joiner's daemon
 *   knows which row to write before any peer answers;
 * - `spaceId`, `inviteId`: the 32-byte hashes behind the base58 ids; the join record names the
 *   invite record, which the joiner cannot learn from the network without it;
 * - `seed`: the invite key's Ed25519 private seed, which signs the join proof.
 * The token is the only secret of an invite: the ACL holds its public key.
 */
export interface InviteToken {
  spaceId: string
  inviteId: string
  privateKey: Uint8Array
  guest: boolean
}

const KIND_INVITE = 1
const KIND_GUEST = 2
const ID_BYTES = 32
const SEED_BYTES = 32
const TOKEN_BYTES = 1 + ID_BYTES + ID_BYTES + SEED_BYTES
/** A base58 token of TOKEN_BYTES is at most this long; anything longer is refused before decoding. */
const MAX_TOKEN_CHARS = 160

function idBytes(id: string, field: string): Uint8Array {
  let b: Uint8Array
  try {
    b = fromBase58(id)
  } catch {
    throw new SvcError('internal', `${field} is not base58`)
  }
  if (b.length !== ID_BYTES) throw new SvcError('internal', `${field} is not a 32-byte id`)
  return b
}

export function encodeInviteToken(spaceId: string, privateKey: Uint8Array, invite: { inviteId: string; guest?: boolean }): string {
  if (privateKey.length !== SEED_BYTES) throw new SvcError('internal', 'invite key must be a 32-byte seed')
  const out = new Uint8Array(TOKEN_BYTES)
  out[0] = invite.guest ? KIND_GUEST : KIND_INVITE
  out.set(idBytes(spaceId, 'spaceId'), 1)
  out.set(idBytes(invite.inviteId, 'inviteId'), 1 + ID_BYTES)
  out.set(privateKey, 1 + 2 * ID_BYTES)
  return toBase58(out)
}

/** Parses a token; anything malformed throws `invite.invalid` (400 on the join route). */
export function decodeInviteToken(token: unknown): InviteToken {
  const invalid = () => new SvcError('invite.invalid', 'the invite token is not valid')
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_CHARS) throw invalid()
  let b: Uint8Array
  try {
    b = fromBase58(token)
  } catch {
    throw invalid()
  }
  if (b.length !== TOKEN_BYTES || (b[0] !== KIND_INVITE && b[0] !== KIND_GUEST)) throw invalid()
  return {
    spaceId: toBase58(b.subarray(1, 1 + ID_BYTES)),
    inviteId: toBase58(b.subarray(1 + ID_BYTES, 1 + 2 * ID_BYTES)),
    privateKey: b.slice(1 + 2 * ID_BYTES),
    guest: b[0] === KIND_GUEST,
  }
}
