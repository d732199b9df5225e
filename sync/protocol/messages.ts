/* eslint-disable @typescript-eslint/no-unsafe-assignment -- a decoded message is an array of unknowns; each field is checked (isU32, isBytes, checkPrefix, ids) before the typed message is built from it */
import { decodeCanonical, encodeCanonical } from '../core/encoding.ts'
import { fromBase58, toBase58 } from '../core/ids.ts'
import { ELEMENT_BYTES, ID_BYTES, JOIN_LIMITS, NONCE_BYTES, PROTOCOL_VERSION, RANGE_FP_BYTES, ROOT_FP_BYTES, SIGNATURE_BYTES, SYNC_LIMITS } from './limits.ts'
import type { JoinStatus } from './sharing-network.ts'

/**
 * Head-sync messages and their one binary encoding (docs/protocol.md is the normative text).
 *
 * Every message is a deterministic CBOR array `[version, type, ...fields]`. Ids (spaces, trees,
 * changes, identities) travel as their 32 raw bytes, not as base58 text. Decoding is strict: a
 * message over the size limit, not canonical CBOR, of another version, of an unknown type, or
 * with any field out of shape or over its limit throws a `ProtocolError` with a stable code,
 * which the session counts per peer and drops.
 */

export const MSG = { hello: 1, auth: 2, sync: 3, step: 4, done: 5, error: 6, join: 7, joined: 8 } as const
export type MessageType = keyof typeof MSG

export const ERROR_CODES = { not_member: 1, unknown_space: 2, too_many_steps: 3, unauthenticated: 4, busy: 5 } as const
export type ErrorCode = keyof typeof ERROR_CODES | 'unknown'

/** "I am `identity`; prove you are who you say by signing this nonce" (a challenge). */
export interface HelloMsg {
  type: 'hello'
  identity: string
  nonce: Uint8Array
}

/** The answer to a hello: a signature by `identity` over the challenge (see auth.ts). */
export interface AuthMsg {
  type: 'auth'
  identity: string
  signature: Uint8Array
}

/** Opens an exchange for a space: the whole-space fingerprint and element count. */
export interface SyncMsg {
  type: 'sync'
  spaceId: string
  req: number
  fp: Uint8Array
  count: number
}

/** Child fingerprints of one range, split into 2^bits equal sub-ranges. */
export interface RangeFps {
  kind: 'fps'
  prefix: number
  len: number
  bits: number
  fps: Uint8Array
}

/** The sender's elements (position, salted element hash) in one range. */
export interface RangeElems {
  kind: 'elems'
  prefix: number
  len: number
  elems: Uint8Array
}

export type RangeItem = RangeFps | RangeElems

/**
 * "These are my heads of this tree: send what I lack (and tell me yours if I have what you
 * lack)." `have` samples the sender's history (the changes 1, 2, 4, 8, ... places from the
 * newest in (lamport, id) order), so a receiver that does not know the sender's heads can still
 * find changes both hold and send only what lies beyond them.
 */
export interface HeadsItem {
  treeId: string
  heads: string[]
  have: string[]
}

/** One step of an exchange. Any section may be empty. */
export interface StepMsg {
  type: 'step'
  spaceId: string
  req: number
  hop: number
  ranges: RangeItem[]
  heads: HeadsItem[]
  /** Positions of trees the sender lacks entirely: "send me every tree at these positions". */
  wants: number[]
  /** Raw signed changes, ACL first, parents before children. */
  changes: Uint8Array[]
}

/** Ends an exchange: nothing (more) differs from the sender's side. */
export interface DoneMsg {
  type: 'done'
  spaceId: string
  req: number
}

export interface ErrorMsg {
  type: 'error'
  spaceId: string
  req: number
  code: ErrorCode
}

/**
 * "Take this join (or cancel) request into the space's ACL": `change` is the raw signed ACL
 * change, authored by the sender's account. Answered by `joined`, or by exactly the refusal a
 * space we do not hold gets (docs/protocol.md, "Joining").
 */
export interface JoinMsg {
  type: 'join'
  spaceId: string
  req: number
  change: Uint8Array
}

/** The status of the request a `join` carried, at the answering device's ACL state. */
export interface JoinedMsg {
  type: 'joined'
  spaceId: string
  req: number
  status: JoinStatus
}

export const JOIN_STATUS_CODES: Readonly<Record<JoinStatus, number>> = { pending: 1, accepted: 2, declined: 3, cancelled: 4 }

export type Message = HelloMsg | AuthMsg | SyncMsg | StepMsg | DoneMsg | ErrorMsg | JoinMsg | JoinedMsg

export type ProtocolErrorCode = 'oversized' | 'malformed' | 'bad_version' | 'unknown_type' | 'over_limit'

/** A message that cannot be accepted, with the stable reason the drop counters use. */
export class ProtocolError extends Error {
  constructor(
    readonly code: ProtocolErrorCode,
    detail: string,
  ) {
    super(`${code}: ${detail}`)
    this.name = 'ProtocolError'
  }
}

/** True when a step asks something of its receiver (and so always gets a reply). */
export const isQuestion = (m: StepMsg) => m.ranges.length > 0 || m.heads.length > 0 || m.wants.length > 0

// ------------------------------------------------------------------------------- encoding

// Base58 is quadratic in the id length and the same ids cross the wire again and again.
const ID_CACHE_MAX = 50_000
const toBytesCache = new Map<string, Uint8Array>()
const toTextCache = new Map<string, string>()

/** The 32 bytes of a base58 id (cached); throws a ProtocolError when it is not one. */
export function idBytes(id: string): Uint8Array {
  const hit = toBytesCache.get(id)
  if (hit) return hit
  let b: Uint8Array
  try {
    b = fromBase58(id)
  } catch {
    throw new ProtocolError('malformed', 'id is not base58')
  }
  if (b.length !== ID_BYTES) throw new ProtocolError('malformed', 'id is not 32 bytes')
  if (toBytesCache.size >= ID_CACHE_MAX) toBytesCache.clear()
  toBytesCache.set(id, b)
  return b
}

/** base58 text of 32 id bytes (cached by the bytes' latin1 string). */
function idText(b: Uint8Array): string {
  let k = ''
  for (let i = 0; i < b.length; i++) k += String.fromCharCode(b[i])
  const hit = toTextCache.get(k)
  if (hit) return hit
  const t = toBase58(b)
  if (toTextCache.size >= ID_CACHE_MAX) toTextCache.clear()
  toTextCache.set(k, t)
  return t
}

function idsBytes(ids: readonly string[]): Uint8Array {
  const out = new Uint8Array(ids.length * ID_BYTES)
  ids.forEach((id, i) => out.set(idBytes(id), i * ID_BYTES))
  return out
}

function u32sBytes(xs: readonly number[]): Uint8Array {
  const out = new Uint8Array(xs.length * 4)
  const dv = new DataView(out.buffer)
  xs.forEach((x, i) => dv.setUint32(i * 4, x))
  return out
}

function rangeWire(r: RangeItem): unknown[] {
  return r.kind === 'fps' ? [0, r.prefix, r.len, r.bits, r.fps] : [1, r.prefix, r.len, r.elems]
}

/** The wire form of a message (before CBOR). Exposed for the byte-exact examples in the docs. */
export function wireOf(m: Message): unknown[] {
  const v = PROTOCOL_VERSION
  switch (m.type) {
    case 'hello':
      return [v, MSG.hello, idBytes(m.identity), m.nonce]
    case 'auth':
      return [v, MSG.auth, idBytes(m.identity), m.signature]
    case 'sync':
      return [v, MSG.sync, idBytes(m.spaceId), m.req, m.fp, m.count]
    case 'step':
      return [
        v,
        MSG.step,
        idBytes(m.spaceId),
        m.req,
        m.hop,
        m.ranges.map(rangeWire),
        m.heads.map((h) => [idBytes(h.treeId), idsBytes(h.heads), idsBytes(h.have)]),
        u32sBytes(m.wants),
        m.changes,
      ]
    case 'done':
      return [v, MSG.done, idBytes(m.spaceId), m.req]
    case 'error':
      return [v, MSG.error, idBytes(m.spaceId), m.req, m.code === 'unknown' ? 0 : ERROR_CODES[m.code]]
    case 'join':
      return [v, MSG.join, idBytes(m.spaceId), m.req, m.change]
    case 'joined':
      return [v, MSG.joined, idBytes(m.spaceId), m.req, JOIN_STATUS_CODES[m.status]]
  }
}

/** Encodes a message; throws a ProtocolError when it would break a limit (a bug on our side). */
export function encodeMessage(m: Message): Uint8Array {
  const bytes = encodeCanonical(wireOf(m))
  if (bytes.length > SYNC_LIMITS.maxMessageBytes) throw new ProtocolError('oversized', `message of ${bytes.length} bytes`)
  return bytes
}

// ------------------------------------------------------------------------------- decoding

const fail = (detail: string): never => {
  throw new ProtocolError('malformed', detail)
}
const over = (detail: string): never => {
  throw new ProtocolError('over_limit', detail)
}

const isU32 = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 0xffffffff
const isBytes = (x: unknown, n?: number): x is Uint8Array => x instanceof Uint8Array && (n === undefined || x.length === n)

function id(x: unknown, what: string): string {
  if (!isBytes(x, ID_BYTES)) fail(`${what} is not 32 bytes`)
  return idText(x as Uint8Array)
}

function ids(x: unknown, what: string, max: number): string[] {
  if (!isBytes(x) || x.length % ID_BYTES !== 0) return fail(`${what} is not a list of 32-byte ids`)
  const n = x.length / ID_BYTES
  if (n > max) over(`${what}: ${n} ids`)
  const out: string[] = []
  for (let i = 0; i < n; i++) out.push(idText(x.subarray(i * ID_BYTES, (i + 1) * ID_BYTES)))
  return out
}

/** True when `pos` lies in the range of the `len`-bit prefix `prefix`. */
export const inRange = (pos: number, prefix: number, len: number) => len === 0 || pos >>> (32 - len) === prefix

function checkPrefix(prefix: unknown, len: unknown) {
  if (!isU32(len) || len > SYNC_LIMITS.maxPrefixBits) fail('range length')
  if (!isU32(prefix) || ((len as number) < 32 && prefix >= 2 ** (len as number))) fail('range prefix')
}

function range(x: unknown): RangeItem {
  if (!Array.isArray(x)) return fail('range item shape')
  if (x[0] === 0 && x.length === 5) {
    const [, prefix, len, bits, fps] = x
    checkPrefix(prefix, len)
    if (!isU32(bits) || bits < 1 || bits > SYNC_LIMITS.maxSplitBits || (len as number) + bits > SYNC_LIMITS.maxPrefixBits) fail('range split bits')
    if (!isBytes(fps, RANGE_FP_BYTES << (bits as number))) fail('range fingerprints length')
    return { kind: 'fps', prefix, len, bits, fps }
  }
  if (x[0] === 1 && x.length === 4) {
    const [, prefix, len, elems] = x
    checkPrefix(prefix, len)
    if (!isBytes(elems) || elems.length % ELEMENT_BYTES !== 0) fail('range elements')
    const n = (elems as Uint8Array).length / ELEMENT_BYTES
    if (n > SYNC_LIMITS.maxRangeElements) over(`range of ${n} elements`)
    const dv = new DataView((elems as Uint8Array).buffer, (elems as Uint8Array).byteOffset, (elems as Uint8Array).length)
    for (let i = 0; i < n; i++) if (!inRange(dv.getUint32(i * ELEMENT_BYTES), prefix as number, len as number)) fail('element outside its range')
    return { kind: 'elems', prefix, len, elems }
  }
  return fail('range item kind')
}

function list<T>(x: unknown, max: number, what: string, each: (y: unknown) => T): T[] {
  if (!Array.isArray(x)) return fail(`${what} is not a list`)
  if (x.length > max) over(`${what}: ${x.length} items`)
  return x.map(each)
}

/**
 * Decodes bytes from a peer. Throws `ProtocolError` on anything but one well-formed message
 * within every limit; never returns a partially checked value.
 */
export function decodeMessage(bytes: Uint8Array): Message {
  if (!(bytes instanceof Uint8Array)) throw new ProtocolError('malformed', 'not bytes')
  if (bytes.length > SYNC_LIMITS.maxMessageBytes) throw new ProtocolError('oversized', `message of ${bytes.length} bytes`)
  let w: unknown
  try {
    // Byte strings are views into `bytes`, which belong to the handler (transport.ts): a step's
    // changes are not copied one by one (an allocation each, a backlog's hundred thousand).
    // Whatever keeps one beyond its message copies it (change.ts `detached`; a join's change).
    w = decodeCanonical(bytes, { byteViews: true })
  } catch {
    throw new ProtocolError('malformed', 'not canonical CBOR')
  }
  if (!Array.isArray(w) || w.length < 2) return fail('not a message array')
  if (w[0] !== PROTOCOL_VERSION) throw new ProtocolError('bad_version', `version ${String(w[0])}`)
  const t = w[1]
  const arity = (n: number) => {
    if (w.length !== n) fail(`wrong field count for type ${String(t)}`)
  }
  const req = (x: unknown) => (isU32(x) ? x : fail('req'))
  switch (t) {
    case MSG.hello:
      arity(4)
      if (!isBytes(w[3], NONCE_BYTES)) fail('nonce')
      return { type: 'hello', identity: id(w[2], 'identity'), nonce: w[3] as Uint8Array }
    case MSG.auth:
      arity(4)
      if (!isBytes(w[3], SIGNATURE_BYTES)) fail('signature')
      return { type: 'auth', identity: id(w[2], 'identity'), signature: w[3] as Uint8Array }
    case MSG.sync:
      arity(6)
      if (!isBytes(w[4], ROOT_FP_BYTES)) fail('fingerprint')
      if (!isU32(w[5])) fail('count')
      return { type: 'sync', spaceId: id(w[2], 'space'), req: req(w[3]), fp: w[4] as Uint8Array, count: w[5] as number }
    case MSG.step: {
      arity(9)
      if (!isU32(w[4]) || w[4] > 1_000_000) fail('hop')
      const ranges = list(w[5], SYNC_LIMITS.maxRangeItems, 'ranges', range)
      const children = ranges.reduce((n, r) => n + (r.kind === 'fps' ? 1 << r.bits : 0), 0)
      if (children > SYNC_LIMITS.maxRangeChildren) over(`${children} child fingerprints`)
      const heads = list(w[6], SYNC_LIMITS.maxHeadsItems, 'heads', (h): HeadsItem => {
        if (!Array.isArray(h) || h.length !== 3) return fail('heads item shape')
        return { treeId: id(h[0], 'tree'), heads: ids(h[1], 'heads', SYNC_LIMITS.maxHeadsPerTree), have: ids(h[2], 'have', SYNC_LIMITS.maxHaveSample) }
      })
      const wb = w[7]
      if (!isBytes(wb) || wb.length % 4 !== 0) return fail('wants')
      if (wb.length / 4 > SYNC_LIMITS.maxWants) over(`${wb.length / 4} wants`)
      const dv = new DataView(wb.buffer, wb.byteOffset, wb.length)
      const wants: number[] = []
      for (let i = 0; i < wb.length; i += 4) wants.push(dv.getUint32(i))
      const changes = list(w[8], SYNC_LIMITS.maxChangesPerStep, 'changes', (c) => (isBytes(c) ? c : fail('change is not bytes')))
      return { type: 'step', spaceId: id(w[2], 'space'), req: req(w[3]), hop: w[4] as number, ranges, heads, wants, changes }
    }
    case MSG.done:
      arity(4)
      return { type: 'done', spaceId: id(w[2], 'space'), req: req(w[3]) }
    case MSG.error: {
      arity(5)
      if (!isU32(w[4])) fail('error code')
      const code = (Object.keys(ERROR_CODES) as Array<keyof typeof ERROR_CODES>).find((k) => ERROR_CODES[k] === w[4]) ?? 'unknown'
      return { type: 'error', spaceId: id(w[2], 'space'), req: req(w[3]), code }
    }
    case MSG.join: {
      arity(5)
      const change = w[4]
      if (!isBytes(change) || change.length === 0) return fail('join change')
      if (change.length > JOIN_LIMITS.maxJoinChangeBytes) over(`join change of ${change.length} bytes`)
      return { type: 'join', spaceId: id(w[2], 'space'), req: req(w[3]), change: change.slice() }
    }
    case MSG.joined: {
      arity(5)
      const status = (Object.keys(JOIN_STATUS_CODES) as JoinStatus[]).find((k) => JOIN_STATUS_CODES[k] === w[4])
      if (!status) return fail('join status')
      return { type: 'joined', spaceId: id(w[2], 'space'), req: req(w[3]), status }
    }
    default:
      throw new ProtocolError('unknown_type', `type ${String(t)}`)
  }
}
