import { decodeCanonical, encodeCanonical } from '../core/encoding.ts'
import { contentId } from '../crypto/hash.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { publicKeyOf, type KeyPair, identityOf } from '../crypto/keys.ts'
import { isBase58 } from '../core/ids.ts'
import { LIMITS } from '../core/limits.ts'
import { readEnvelope, type EnvelopeParts } from './envelope-reader.ts'

export const CHANGE_FORMAT_VERSION = 1

/**
 * The change envelope (DESIGN 2). Every field is covered by the author's signature, and the
 * change id is the base58 SHA-256 of the signed bytes, so it is a content address: identical
 * on every peer, and any altered byte yields another id.
 *
 * - `spaceId` binds a change to its space ('' only on the ACL root, whose id is the space id);
 * - `treeId` is the root change id of the tree ('' on roots, whose own id names the tree);
 * - `prevIds` are the heads it builds on, sorted, no duplicates;
 * - `aclHeadId` is the ACL record at which the author's right to write is judged;
 * - `readKeyId` names the read key the payload is sealed under ('' when the payload is plain:
 *   roots and ACL records, whose secrets are individually wrapped).
 * A derived root has no author, signature, time or randomness, so every device computes it.
 */
export interface ChangeHeader {
  spaceId: string
  treeId: string
  prevIds: string[]
  aclHeadId: string
  author: string
  seq: number
  lamport: number
  timestamp: number
  readKeyId: string
  payload: Uint8Array
}

export interface Change extends ChangeHeader {
  id: string
  signature: Uint8Array
  /** The exact bytes the id was computed over: what is stored and sent. */
  raw: Uint8Array
  /** The bytes the signature covers (the encoded header), kept so nothing decodes twice. */
  signed: Uint8Array
}

type UnsignedTuple = [number, string, string, string[], string, string, number, number, number, string, Uint8Array]

function encodeUnsigned(h: ChangeHeader): Uint8Array {
  const t: UnsignedTuple = [CHANGE_FORMAT_VERSION, h.spaceId, h.treeId, h.prevIds, h.aclHeadId, h.author, h.seq, h.lamport, h.timestamp, h.readKeyId, h.payload]
  return encodeCanonical(t)
}

/** Builds a change from a header and a signature as given (tests use it to forge changes). */
export function assembleChange(h: ChangeHeader, signature: Uint8Array): Change {
  return assemble(h, encodeUnsigned(h), signature)
}

/** `hash`: the SHA-256 the id is computed with (a provider's native one where it has one). */
function assemble(h: ChangeHeader, unsigned: Uint8Array, signature: Uint8Array, hash?: (b: Uint8Array) => Uint8Array): Change {
  const raw = encodeCanonical([unsigned, signature])
  return { ...h, prevIds: [...h.prevIds], signature, raw, signed: unsigned, id: contentId(raw, hash) }
}

export function normalizePrevIds(ids: Iterable<string>): string[] {
  return [...new Set(ids)].sort()
}

/** Signs a header with the author's key. `header.author` must be that key's identity. */
export async function signChange(provider: CryptoProvider, key: KeyPair, header: Omit<ChangeHeader, 'author'>): Promise<Change> {
  const h: ChangeHeader = { ...header, prevIds: normalizePrevIds(header.prevIds), author: identityOf(key.publicKey) }
  const unsigned = encodeUnsigned(h)
  return assemble(h, unsigned, await provider.sign(key.privateKey, unsigned), provider.sha256)
}

/**
 * `signChange` for many headers by one key: signed through the provider's `signMany` (in
 * parallel, off the calling thread) when it has one, else one by one. Changes in input order.
 */
export async function signChanges(provider: CryptoProvider, key: KeyPair, headers: ReadonlyArray<Omit<ChangeHeader, 'author'>>): Promise<Change[]> {
  if (!provider.signMany || headers.length < 2) {
    const out: Change[] = []
    for (const h of headers) out.push(await signChange(provider, key, h))
    return out
  }
  const author = identityOf(key.publicKey)
  const full = headers.map((header): ChangeHeader => ({ ...header, prevIds: normalizePrevIds(header.prevIds), author }))
  const unsigned = full.map(encodeUnsigned)
  const sigs = await provider.signMany(key.privateKey, unsigned)
  return full.map((h, i) => assemble(h, unsigned[i], sigs[i], provider.sha256))
}

/** A root nobody signs: its id is a pure function of its content. */
export function derivedRoot(spaceId: string, payload: Uint8Array): Change {
  const h: ChangeHeader = {
    spaceId,
    treeId: '',
    prevIds: [],
    aclHeadId: '',
    author: '',
    seq: 0,
    lamport: 0,
    timestamp: 0,
    readKeyId: '',
    payload,
  }
  return assemble(h, encodeUnsigned(h), new Uint8Array(0))
}

export class MalformedChange extends Error {
  constructor(readonly reason: string) {
    super(`malformed change: ${reason}`)
  }
}

const isNat = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0
const isBase58Id = (s: unknown): s is string => isBase58(s) && s.length <= 64
// For strings the envelope reader already checked against the alphabet.
const isIdLength = (s: unknown): s is string => typeof s === 'string' && s.length > 0 && s.length <= 64

/**
 * Parses bytes from anywhere (disk or peer) into a change, checking shape only: the id is
 * recomputed from the bytes, so it is never trusted from the sender. Signature and rights
 * are checked by ingest, which has the ACL.
 */
/** `hash`: the SHA-256 the id is computed with (a provider's native one on ingest). */
export function decodeChange(raw: Uint8Array, hash?: (b: Uint8Array) => Uint8Array): Change {
  if (!(raw instanceof Uint8Array)) throw new MalformedChange('not bytes')
  if (raw.length > LIMITS.maxChangeBytes) throw new MalformedChange('too large')
  const parts = readEnvelope(raw) ?? decodeEnvelope(raw)
  const t = parts.header
  if (!Array.isArray(t) || t.length !== 11) throw new MalformedChange('header shape')
  const isId = parts.base58 ? isIdLength : isBase58Id
  const isIdOrEmpty = (s: unknown): s is string => s === '' || isId(s)
  const [v, spaceId, treeId, prevIds, aclHeadId, author, seq, lamport, timestamp, readKeyId, payload] = t
  if (v !== CHANGE_FORMAT_VERSION) throw new MalformedChange('unknown format version')
  if (!isIdOrEmpty(spaceId) || !isIdOrEmpty(treeId) || !isIdOrEmpty(aclHeadId) || !isIdOrEmpty(readKeyId)) throw new MalformedChange('bad id field')
  if (author !== '' && (!isId(author) || !authorKey(author))) throw new MalformedChange('bad author')
  if (!Array.isArray(prevIds) || prevIds.length > LIMITS.maxPrevIds || !prevIds.every(isId)) throw new MalformedChange('bad prevIds')
  for (let i = 1; i < prevIds.length; i++) if (!(prevIds[i - 1] < prevIds[i])) throw new MalformedChange('prevIds not sorted')
  if (!isNat(seq) || !isNat(lamport) || !isNat(timestamp)) throw new MalformedChange('bad counter')
  if (!(payload instanceof Uint8Array)) throw new MalformedChange('bad payload')
  const sig = parts.signature
  if (author === '' ? sig.length !== 0 : sig.length !== 64) throw new MalformedChange('bad signature length')
  if ((treeId === '') !== (prevIds.length === 0)) throw new MalformedChange('roots and only roots have no parents')
  return {
    spaceId,
    treeId,
    prevIds: prevIds,
    aclHeadId,
    author,
    seq,
    lamport,
    timestamp,
    readKeyId,
    payload,
    signature: sig,
    raw,
    signed: parts.signed,
    id: contentId(raw, hash),
  }
}

/**
 * The change with bytes of its own: `raw` may be a view into a larger buffer (a sync step's
 * frame, whose changes are decoded in place), and `signed`, `payload` and `signature` views into
 * `raw`. What keeps a change beyond its ingest (parked changes, held roots) keeps this, so it
 * holds its own bytes and not a whole frame: their bounds count `raw.byteLength`.
 */
export function detached(c: Change): Change {
  const raw = c.raw
  if (raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength) return c
  const copy = raw.slice()
  const from = raw.byteOffset
  const end = from + raw.byteLength
  // A part decoded by cborg (the generic path) is a copy already; only views into raw move.
  const part = (v: Uint8Array) =>
    v.buffer === raw.buffer && v.byteOffset >= from && v.byteOffset + v.byteLength <= end ? copy.subarray(v.byteOffset - from, v.byteOffset - from + v.byteLength) : v
  return { ...c, raw: copy, signed: part(c.signed), payload: part(c.payload), signature: part(c.signature) }
}

/** The generic path (cborg, strict), for whatever readEnvelope leaves to it. */
export function decodeEnvelope(raw: Uint8Array): EnvelopeParts {
  let outer: unknown
  let inner: unknown
  try {
    outer = decodeCanonical(raw)
    if (!Array.isArray(outer) || outer.length !== 2 || !(outer[0] instanceof Uint8Array) || !(outer[1] instanceof Uint8Array)) {
      throw new MalformedChange('envelope shape')
    }
    inner = decodeCanonical(outer[0])
  } catch (err) {
    if (err instanceof MalformedChange) throw err
    throw new MalformedChange('not canonical CBOR')
  }
  if (!Array.isArray(inner)) throw new MalformedChange('header shape')
  return { header: inner, signed: (outer as Uint8Array[])[0], signature: (outer as Uint8Array[])[1], base58: false }
}

// Peers sign many changes with one key: parse each author id once.
const authorKeys = new Map<string, Uint8Array | null>()

function authorKey(author: string): Uint8Array | null {
  let k = authorKeys.get(author)
  if (k !== undefined) return k
  try {
    k = publicKeyOf(author)
  } catch {
    k = null
  }
  if (authorKeys.size > 10_000) authorKeys.clear()
  authorKeys.set(author, k)
  return k
}

/** The bytes the signature covers, for a decoded change. */
export const signedBytesOf = (change: Change): Uint8Array => change.signed

/** Checks the author's signature (not rights). Derived roots carry none and need none. */
export function verifyChangeSignature(provider: CryptoProvider, change: Change): Promise<boolean> {
  // Not `async`: the provider's promise is handed on as it is, without a wrapping promise
  // per change (one per ingested change adds up in the young generation).
  if (change.author === '') return Promise.resolve(change.treeId === '' && change.aclHeadId === '' && change.signature.length === 0)
  const key = authorKey(change.author)
  return key === null ? Promise.resolve(false) : provider.verify(key, change.signed, change.signature)
}

/** Deterministic total order of changes everywhere: (lamport, changeId). */
export function compareChanges(a: { lamport: number; id: string }, b: { lamport: number; id: string }): number {
  return a.lamport - b.lamport || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}
