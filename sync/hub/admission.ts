import { decodeCanonical, encodeCanonical } from '../core/encoding.ts'
import { fromBase58, isBase58, toBase58 } from '../core/ids.ts'
import { identityOf, publicKeyOf, type KeyPair } from '../crypto/keys.ts'
import type { CryptoProvider } from '../crypto/provider.ts'

/**
 * Admission tokens (docs/hub.md "Admission"): the hub operator mints one for an account with
 * `svc hub admit <account>`; a device of that account hands it to the hub once, and the hub
 * admits the account. The token is signed by the hub's own key and names the hub and the
 * account, so it admits that account at that hub only: a stolen token admits nobody else.
 *
 * ```
 * token  = base58(CBOR [1, hub, account, expiresAt, signature])
 * signed = CBOR ["svc/hub/admit/v1", hub, account, expiresAt]     (ids as base58 text, expiresAt ms, 0 = never)
 * ```
 */
const DOMAIN = 'svc/hub/admit/v1'
const VERSION = 1

export interface AdmissionClaim {
  hub: string
  account: string
  /** Milliseconds since the epoch; 0: never expires. */
  expiresAt: number
}

const signedBytes = (c: AdmissionClaim) => encodeCanonical([DOMAIN, c.hub, c.account, c.expiresAt])

export async function mintAdmission(crypto: CryptoProvider, hubKey: KeyPair, account: string, expiresAt: number): Promise<string> {
  if (!isBase58(account)) throw new Error('not an account id')
  const claim: AdmissionClaim = { hub: identityOf(hubKey.publicKey), account, expiresAt }
  const sig = await crypto.sign(hubKey.privateKey, signedBytes(claim))
  return toBase58(encodeCanonical([VERSION, claim.hub, claim.account, claim.expiresAt, sig]))
}

/**
 * The account a token admits at `hub` now, or the reason it admits nobody. Checks the token
 * names this hub, is not past its expiry, and carries the hub's signature.
 */
export async function verifyAdmission(
  crypto: CryptoProvider,
  hub: string,
  token: string,
  now: number,
): Promise<{ account: string } | { refused: 'malformed' | 'other_hub' | 'expired' | 'forged' }> {
  let claim: AdmissionClaim
  let sig: Uint8Array
  try {
    const v = decodeCanonical<unknown[]>(fromBase58(token))
    if (!Array.isArray(v) || v.length !== 5 || v[0] !== VERSION) return { refused: 'malformed' }
    const [, h, account, expiresAt, s] = v
    if (!isBase58(h) || !isBase58(account) || typeof expiresAt !== 'number' || !Number.isSafeInteger(expiresAt) || expiresAt < 0 || !(s instanceof Uint8Array))
      return { refused: 'malformed' }
    claim = { hub: h, account, expiresAt }
    sig = s
  } catch {
    return { refused: 'malformed' }
  }
  if (claim.hub !== hub) return { refused: 'other_hub' }
  if (claim.expiresAt !== 0 && claim.expiresAt <= now) return { refused: 'expired' }
  const ok = await crypto.verify(publicKeyOf(hub), signedBytes(claim), sig).catch(() => false)
  return ok ? { account: claim.account } : { refused: 'forged' }
}
