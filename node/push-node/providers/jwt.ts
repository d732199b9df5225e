import { createPrivateKey, createSign, sign as signRaw, type KeyObject } from 'node:crypto'

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url')

/** A compact JWS: RS256 (FCM's service-account assertion) or ES256 (APNs provider token). */
export function signJwt(alg: 'RS256' | 'ES256', header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject | string): string {
  const k = typeof key === 'string' ? createPrivateKey(key) : key
  const input = `${b64url(JSON.stringify({ alg, typ: 'JWT', ...header }))}.${b64url(JSON.stringify(claims))}`
  const sig = alg === 'RS256' ? createSign('RSA-SHA256').update(input).sign(k) : signRaw('sha256', Buffer.from(input), { key: k, dsaEncoding: 'ieee-p1363' })
  return `${input}.${b64url(sig)}`
}
