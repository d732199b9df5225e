import { decodeCanonical, encodeCanonical, utf8 } from '../core/encoding.ts'
import { fromBase58, toBase58 } from '../core/ids.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import type { KeyPair } from '../crypto/keys.ts'

/**
 * The push protocol between a daemon and a push node (`/svc/push/1.0.0`, docs/push.md "Wire"):
 * one request frame, one reply frame, per stream. Pure functions: bytes in, values out; the
 * framing is the layer above's (node/push, node/push-node).
 *
 * ```
 * request = CBOR {v: 1, op, ...fields, ts, sig}
 *   subscribe:  {spaceKey, platform, token, topics}  sets the token's topics under the space key (replace)
 *   unregister: {platform, token}                    drops the token everywhere (unsigned: the token is the secret)
 *   send:       {spaceKey, topics, keyId, payload (bytes), groupId?, silent, except?}
 * sig   = Ed25519 by the space push key over CBOR ["svc/push/v1", op, ...signed fields, ts]
 * reply = CBOR {ok: true, validTopics?, delivered?} | {ok: false, code}
 * ```
 *
 * A subscription and a send name their space key and are signed by it, so a topic always lives
 * in the namespace of the key that signed it (chat.md "Authentication" item 4): whoever lacks a
 * space's push key can neither subscribe to its topics nor push into them.
 */
export const PUSH_PROTOCOL = '/svc/push/1.0.0'

/** What one request may carry (the node's other bounds are in sync/modules/push/limits.ts). */
export const PUSH_WIRE_LIMITS = {
  maxTopicsPerRequest: 256,
  maxTopicBytes: 256,
  maxTokenBytes: 4096,
  /** The largest request is a full subscribe: 256 topics of 256 bytes and a token. */
  maxFrameBytes: 256 * 1024,
} as const
const PUSH_LIMITS = PUSH_WIRE_LIMITS
export const PUSH_WIRE_VERSION = 1
const DOMAIN = 'svc/push/v1'

export type PushPlatform = 'ios' | 'android' | 'ntfy' | 'webpush'
export const PUSH_PLATFORMS: readonly PushPlatform[] = ['ios', 'android', 'ntfy', 'webpush']

export interface SubscribeRequest {
  op: 'subscribe'
  spaceKey: string
  platform: PushPlatform
  token: string
  topics: string[]
  ts: number
  sig: Uint8Array
}
export interface UnregisterRequest {
  op: 'unregister'
  platform: PushPlatform
  token: string
  ts: number
}
export interface SendRequest {
  op: 'send'
  spaceKey: string
  topics: string[]
  keyId: string
  payload: Uint8Array
  groupId?: string
  silent: boolean
  /**
   * The sending device's own token, as the lowercase hex SHA-256 of its text: the node delivers
   * to every subscribed token but that one, so a device is never notified of its own write.
   */
  except?: string
  ts: number
  sig: Uint8Array
}
export type PushRequest = SubscribeRequest | UnregisterRequest | SendRequest

/** Why the node refused a request. `forged`: the signature is not the space key's. */
export type PushRefusal = 'malformed' | 'forged' | 'stale' | 'rate_limited' | 'too_many_topics' | 'too_many_tokens' | 'too_large' | 'unavailable'
export type PushReply = { ok: true; validTopics?: number; delivered?: number } | { ok: false; code: PushRefusal }

export class MalformedPush extends Error {}

function signedBytes(r: Omit<SubscribeRequest, 'sig'> | Omit<SendRequest, 'sig'>): Uint8Array {
  if (r.op === 'subscribe') return encodeCanonical([DOMAIN, r.op, r.spaceKey, r.platform, r.token, r.topics, r.ts])
  const fields = [DOMAIN, r.op, r.spaceKey, r.topics, r.keyId, r.payload, r.groupId ?? '', r.silent, r.ts]
  // Signed when present (appended, so a send without it signs the bytes it always did).
  return encodeCanonical(r.except === undefined ? fields : [...fields, r.except])
}

export async function signSubscribe(crypto: CryptoProvider, pushKey: KeyPair, r: Omit<SubscribeRequest, 'op' | 'sig' | 'spaceKey'>): Promise<SubscribeRequest> {
  const unsigned = { op: 'subscribe' as const, spaceKey: toBase58(pushKey.publicKey), ...r }
  return { ...unsigned, sig: await crypto.sign(pushKey.privateKey, signedBytes(unsigned)) }
}

export async function signSend(crypto: CryptoProvider, pushKey: KeyPair, r: Omit<SendRequest, 'op' | 'sig' | 'spaceKey'>): Promise<SendRequest> {
  const unsigned = { op: 'send' as const, spaceKey: toBase58(pushKey.publicKey), ...r }
  return { ...unsigned, sig: await crypto.sign(pushKey.privateKey, signedBytes(unsigned)) }
}

export function encodePushRequest(r: PushRequest): Uint8Array {
  const out: Record<string, unknown> = { v: PUSH_WIRE_VERSION, ...r }
  if (out.groupId === undefined) delete out.groupId
  if (out.except === undefined) delete out.except
  return encodeCanonical(out)
}

export const encodePushReply = (r: PushReply): Uint8Array => encodeCanonical(r)

export function decodePushReply(bytes: Uint8Array): PushReply {
  let v: unknown
  try {
    v = decodeCanonical(bytes)
  } catch {
    throw new MalformedPush('reply is not CBOR')
  }
  if (!isObj(v) || typeof v.ok !== 'boolean') throw new MalformedPush('reply shape')
  if (v.ok) return { ok: true, validTopics: num(v.validTopics), delivered: num(v.delivered) }
  if (typeof v.code !== 'string') throw new MalformedPush('reply code')
  return { ok: false, code: v.code as PushRefusal }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)
const num = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined)
const str = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && utf8(v).length <= max

function spaceKeyOk(k: unknown): k is string {
  if (!str(k, 64)) return false
  try {
    return fromBase58(k).length === 32
  } catch {
    return false
  }
}

/**
 * Decodes a request and checks its shape (not its signature: `verifyPushRequest`). Topics are
 * kept as sent: the node counts the ones of a valid shape (`validTopics`) and drops the rest.
 */
export function decodePushRequest(bytes: Uint8Array): PushRequest {
  if (bytes.length > PUSH_LIMITS.maxFrameBytes) throw new MalformedPush('too large')
  let v: unknown
  try {
    v = decodeCanonical(bytes)
  } catch {
    throw new MalformedPush('not CBOR')
  }
  if (!isObj(v) || v.v !== PUSH_WIRE_VERSION) throw new MalformedPush('version')
  const ts = v.ts
  if (typeof ts !== 'number' || !Number.isSafeInteger(ts)) throw new MalformedPush('ts')
  const platformOk = (p: unknown): p is PushPlatform => typeof p === 'string' && (PUSH_PLATFORMS as readonly string[]).includes(p)
  const topicsOf = (t: unknown): string[] => {
    if (!Array.isArray(t) || t.length > PUSH_LIMITS.maxTopicsPerRequest || !t.every((x) => typeof x === 'string' && x.length <= PUSH_LIMITS.maxTopicBytes))
      throw new MalformedPush('topics')
    return t as string[]
  }
  const sigOf = (s: unknown): Uint8Array => {
    if (!(s instanceof Uint8Array) || s.length !== 64) throw new MalformedPush('sig')
    return s
  }
  switch (v.op) {
    case 'subscribe':
      if (!spaceKeyOk(v.spaceKey) || !platformOk(v.platform) || !str(v.token, PUSH_LIMITS.maxTokenBytes)) throw new MalformedPush('subscribe fields')
      return { op: 'subscribe', spaceKey: v.spaceKey, platform: v.platform, token: v.token, topics: topicsOf(v.topics), ts, sig: sigOf(v.sig) }
    case 'unregister':
      if (!platformOk(v.platform) || !str(v.token, PUSH_LIMITS.maxTokenBytes)) throw new MalformedPush('unregister fields')
      return { op: 'unregister', platform: v.platform, token: v.token, ts }
    case 'send': {
      if (!spaceKeyOk(v.spaceKey) || !str(v.keyId, 128) || !(v.payload instanceof Uint8Array) || typeof v.silent !== 'boolean') throw new MalformedPush('send fields')
      if (v.groupId !== undefined && !str(v.groupId, 128)) throw new MalformedPush('groupId')
      const r: SendRequest = { op: 'send', spaceKey: v.spaceKey, topics: topicsOf(v.topics), keyId: v.keyId, payload: v.payload, silent: v.silent, ts, sig: sigOf(v.sig) }
      if (v.groupId !== undefined) r.groupId = v.groupId
      if (v.except !== undefined) {
        if (typeof v.except !== 'string' || !HEX64.test(v.except)) throw new MalformedPush('except')
        r.except = v.except
      }
      return r
    }
    default:
      throw new MalformedPush('op')
  }
}

/** Whether a signed request carries the signature of the space key it names. */
export async function verifyPushRequest(crypto: CryptoProvider, r: SubscribeRequest | SendRequest): Promise<boolean> {
  const { sig, ...unsigned } = r
  return crypto.verify(fromBase58(r.spaceKey), signedBytes(unsigned), sig)
}

/** The topics of a request the node accepts: well-shaped, deduplicated. */
export const validTopicsOf = (topics: readonly string[]): string[] => [...new Set(topics.filter(isTopic))]

/** The topic shapes a sender publishes (sync/modules/push/topics.ts builds them); the node refuses any other. */
const HEX64 = /^[0-9a-f]{64}$/
const IDENTITY = /^[1-9A-HJ-NP-Za-km-z]{32,64}$/

export function isTopic(t: unknown): t is string {
  if (typeof t !== 'string' || t.length === 0 || utf8(t).length > PUSH_WIRE_LIMITS.maxTopicBytes) return false
  if (t === 'chats') return true
  const parts = t.split('/')
  if (parts.length === 1) return IDENTITY.test(t)
  if (parts[0] !== 'chats' || !HEX64.test(parts[1])) return false
  return parts.length === 2 || (parts.length === 3 && IDENTITY.test(parts[2]))
}
