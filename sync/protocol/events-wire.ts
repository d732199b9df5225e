import { concatBytes, decodeCanonical, encodeCanonical, fromUtf8, toHex, utf8 } from '../core/encoding.ts'
import type { Env } from '../core/env.ts'
import { open, seal } from '../crypto/box.ts'
import type { Aead } from '../crypto/aead.ts'
import { identityOf, publicKeyOf, type KeyPair } from '../crypto/keys.ts'
import type { CryptoProvider } from '../crypto/provider.ts'

/**
 * The wire form of a network-scope event (`/svc/events/1.0.0`, docs/api.md "Event bus"):
 *
 * ```
 * signed = CBOR [1, scope (1 account, 2 space), spaceId, eventId (16 random bytes), timestamp (ms), readKeyId, sealed]
 * frame  = CBOR [signed, signer (account identity), signature (Ed25519 by the signer over signed)]
 * sealed = nonce(24) || XChaCha20-Poly1305(readKey, UTF-8 JSON {type, target?, data?}, aad = "svc/event/v1" || spaceId)
 * ```
 *
 * An account event is sealed under the tech space's current read key (only the account's own
 * devices hold it), a space event under the space's. The network sees the space id, sizes and
 * timing, never the type, target or data. Pure functions: bytes in, values out.
 */
export const WIRE_VERSION = 1
export type WireScope = 'account' | 'space'
const SCOPE_CODE: Record<WireScope, number> = { account: 1, space: 2 }
const AAD_PREFIX = utf8('svc/event/v1')
const EVENT_ID_BYTES = 16
const SIGNATURE_BYTES = 64

/** What is sealed: the event's topic and payload. */
export interface EventBody {
  type: string
  target?: string
  data?: unknown
}

export interface EventFrame {
  signed: Uint8Array
  signer: string
  signature: Uint8Array
  scope: WireScope
  spaceId: string
  eventId: string
  timestamp: number
  readKeyId: string
  sealed: Uint8Array
}

export class MalformedEvent extends Error {}

const aadOf = (spaceId: string) => concatBytes(AAD_PREFIX, utf8(spaceId))

export interface SealOptions {
  scope: WireScope
  spaceId: string
  readKeyId: string
  readKey: Uint8Array
  body: EventBody
  key: KeyPair
  crypto: CryptoProvider
  env: Env
  aead?: Aead
}

/** Seals, signs and encodes one event. */
export async function encodeEventFrame(o: SealOptions): Promise<Uint8Array> {
  const plain = utf8(JSON.stringify(o.body))
  const sealed = seal(o.env, o.readKey, plain, aadOf(o.spaceId), o.aead ?? o.crypto.aead)
  const signed = encodeCanonical([WIRE_VERSION, SCOPE_CODE[o.scope], o.spaceId, o.env.randomBytes(EVENT_ID_BYTES), o.env.now(), o.readKeyId, sealed])
  const signature = await o.crypto.sign(o.key.privateKey, signed)
  return encodeCanonical([signed, identityOf(o.key.publicKey), signature])
}

const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array
const isStr = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max

/** Decodes a frame's structure (no signature check, nothing opened); throws MalformedEvent. */
export function decodeEventFrame(bytes: Uint8Array): EventFrame {
  let outer: unknown
  let inner: unknown
  try {
    outer = decodeCanonical(bytes)
    if (!Array.isArray(outer) || outer.length !== 3 || !isBytes(outer[0])) throw new MalformedEvent('frame')
    inner = decodeCanonical(outer[0])
  } catch {
    throw new MalformedEvent('not canonical CBOR of the frame shape')
  }
  const [signed, signer, signature] = outer as [Uint8Array, unknown, unknown]
  if (!isStr(signer, 64) || !isBytes(signature) || signature.length !== SIGNATURE_BYTES) throw new MalformedEvent('signer or signature')
  if (!Array.isArray(inner) || inner.length !== 7) throw new MalformedEvent('signed part')
  const [version, scope, spaceId, eventId, timestamp, readKeyId, sealed] = inner as unknown[]
  if (version !== WIRE_VERSION) throw new MalformedEvent('version')
  if (scope !== 1 && scope !== 2) throw new MalformedEvent('scope')
  if (!isStr(spaceId, 128) || !isStr(readKeyId, 128)) throw new MalformedEvent('ids')
  if (!isBytes(eventId) || eventId.length !== EVENT_ID_BYTES) throw new MalformedEvent('event id')
  if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp)) throw new MalformedEvent('timestamp')
  if (!isBytes(sealed)) throw new MalformedEvent('sealed')
  return { signed, signer, signature, scope: scope === 1 ? 'account' : 'space', spaceId, eventId: toHex(eventId), timestamp, readKeyId, sealed }
}

/** Whether the frame's signature is the signer's. */
export async function verifyEventFrame(f: EventFrame, crypto: CryptoProvider): Promise<boolean> {
  let pub: Uint8Array
  try {
    pub = publicKeyOf(f.signer)
  } catch {
    return false
  }
  return crypto.verify(pub, f.signed, f.signature).catch(() => false)
}

/** Opens the sealed body; throws MalformedEvent when it does not open or is not a body. */
export function openEventBody(f: EventFrame, readKey: Uint8Array, aead?: Aead): EventBody {
  let parsed: unknown
  try {
    parsed = JSON.parse(fromUtf8(open(readKey, f.sealed, aadOf(f.spaceId), aead)))
  } catch {
    throw new MalformedEvent('sealed body does not open')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new MalformedEvent('body')
  const b = parsed as Record<string, unknown>
  for (const k of Object.keys(b)) if (k !== 'type' && k !== 'target' && k !== 'data') throw new MalformedEvent('body key')
  if (typeof b.type !== 'string' || (b.target !== undefined && typeof b.target !== 'string')) throw new MalformedEvent('type or target')
  return { type: b.type, ...(b.target !== undefined ? { target: b.target } : {}), ...(b.data !== undefined ? { data: b.data } : {}) }
}
