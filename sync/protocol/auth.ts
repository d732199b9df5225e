import { encodeCanonical, utf8 } from '../core/encoding.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { publicKeyOf, type KeyPair } from '../crypto/keys.ts'
import { idBytes } from './messages.ts'

/** Domain separation for link authentication signatures. */
export const AUTH_CONTEXT = 'svc/sync/auth/v1'

/**
 * The bytes an account signs to answer a peer's challenge (docs/protocol.md, "Authentication"):
 * deterministic CBOR of
 *   [AUTH_CONTEXT, signer identity (32 bytes), verifier identity (32 bytes),
 *    signer peer id (UTF-8), verifier peer id (UTF-8), the verifier's nonce (16 bytes)].
 * The verifier's fresh nonce makes an old answer useless (no replay); both transport peer ids
 * bind the answer to this one link, so it cannot be relayed to another peer.
 */
export function authBytes(signer: string, verifier: string, signerPeer: string, verifierPeer: string, nonce: Uint8Array): Uint8Array {
  return encodeCanonical([AUTH_CONTEXT, idBytes(signer), idBytes(verifier), utf8(signerPeer), utf8(verifierPeer), nonce])
}

export function signAuth(crypto: CryptoProvider, key: KeyPair, bytes: Uint8Array): Promise<Uint8Array> {
  return crypto.sign(key.privateKey, bytes)
}

export async function verifyAuth(crypto: CryptoProvider, identity: string, bytes: Uint8Array, signature: Uint8Array): Promise<boolean> {
  let pub: Uint8Array
  try {
    pub = publicKeyOf(identity)
  } catch {
    return false
  }
  return crypto.verify(pub, bytes, signature)
}
