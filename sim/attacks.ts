/**
 * What a hostile peer crafts: changes (forged, tampered, backdated, junk), ACL records, derived
 * roots and raw protocol frames. Pure functions of their inputs and a PRNG, so a seed replays.
 * None of it goes through a replica's write path: these are the bytes a peer can send whatever
 * code it runs.
 */
import { encodeCanonical } from '../sync/core/encoding.ts'
import type { Env } from '../sync/core/env.ts'
import { toBase58 } from '../sync/core/ids.ts'
import { seal } from '../sync/crypto/box.ts'
import type { KeyPair } from '../sync/crypto/keys.ts'
import type { CryptoProvider } from '../sync/crypto/provider.ts'
import { encodeAclRecord, type AclRecord } from '../sync/acl/records.ts'
import { assembleChange, derivedRoot, normalizePrevIds, signChange, type Change, type ChangeHeader } from '../sync/dag/change.ts'
import type { Op } from '../sync/crdt/ops.ts'
import { encodeMessage, type Message, type RangeItem, type StepMsg } from '../sync/protocol/messages.ts'
import { PROTOCOL_VERSION, SYNC_LIMITS } from '../sync/protocol/limits.ts'
import type { Prng } from './prng.ts'

/** The dataset adversaries write their markers into (honest writes use r0..r3 there). */
export const MARKER_DS = 'tasks'

/** One op that leaves the marker visible in a record named after it, if it is ever applied. */
export const markerOps = (marker: string): Op[] => [{ op: 'set', ds: MARKER_DS, id: marker, path: 'm', value: marker }]

/** A random 32-byte id (of nothing). */
export const randomId = (r: Prng): string => toBase58(r.bytes(32))

export interface WriteHeader {
  spaceId: string
  treeId: string
  prevIds: string[]
  aclHeadId: string
  lamport: number
  timestamp: number
  readKeyId: string
  seq: number
}

/** A properly signed change carrying `ops` sealed under `rk` (a member's write, or a removed one's). */
export function sealedWrite(crypto: CryptoProvider, env: Env, key: KeyPair, h: WriteHeader, rk: Uint8Array, ops: Op[]): Promise<Change> {
  const payload = seal(env, rk, encodeCanonical({ ops }), undefined, crypto.aead)
  return signChange(crypto, key, { ...h, prevIds: normalizePrevIds(h.prevIds), payload })
}

/**
 * The same write claimed by `author` (an honest member) but signed with the forger's key: what
 * a peer impersonating a writer can produce. Its signature does not verify for `author`.
 */
export async function forgedWrite(
  crypto: CryptoProvider,
  env: Env,
  forger: KeyPair,
  author: string,
  h: WriteHeader,
  rk: Uint8Array | undefined,
  ops: Op[],
  r: Prng,
): Promise<Change> {
  const payload = rk ? seal(env, rk, encodeCanonical({ ops }), undefined, crypto.aead) : r.bytes(64 + r.int(256))
  const header: ChangeHeader = { ...h, prevIds: normalizePrevIds(h.prevIds), author, payload }
  const real = await signChange(crypto, forger, { ...header })
  // The forger's real signature over the claimed header: valid bytes, wrong key.
  return assembleChange(header, r.chance(0.5) ? real.signature : r.bytes(64))
}

/** An ACL record claimed by `author` (the owner, say) with a signature that is not theirs. */
export function forgedAcl(spaceId: string, author: string, prevIds: string[], lamport: number, record: AclRecord, r: Prng): Change {
  const header: ChangeHeader = {
    spaceId,
    treeId: spaceId,
    prevIds: normalizePrevIds(prevIds),
    aclHeadId: '',
    author,
    seq: 1 + r.int(1000),
    lamport,
    timestamp: 0,
    readKeyId: '',
    payload: encodeAclRecord(record),
  }
  return assembleChange(header, r.bytes(64))
}

/** A signed ACL record with a chosen lamport and parents (a removed admin backdating). */
export function signedAcl(
  crypto: CryptoProvider,
  key: KeyPair,
  spaceId: string,
  prevIds: string[],
  lamport: number,
  timestamp: number,
  seq: number,
  record: AclRecord,
): Promise<Change> {
  return signChange(crypto, key, {
    spaceId,
    treeId: spaceId,
    prevIds: normalizePrevIds(prevIds),
    aclHeadId: '',
    seq,
    lamport,
    timestamp,
    readKeyId: '',
    payload: encodeAclRecord(record),
  })
}

/**
 * Grinds `seq` until the record's id sorts below `below`, so at an equal lamport the fold in
 * (lamport, id) order meets it first. Gives up after `tries` signatures (returns the last one).
 */
export async function groundBelow(
  crypto: CryptoProvider,
  key: KeyPair,
  spaceId: string,
  prevIds: string[],
  lamport: number,
  timestamp: number,
  record: AclRecord,
  below: string,
  tries: number,
): Promise<{ change: Change; ground: boolean }> {
  let c = await signedAcl(crypto, key, spaceId, prevIds, lamport, timestamp, 1, record)
  for (let seq = 2; c.id >= below && seq <= tries; seq++) c = await signedAcl(crypto, key, spaceId, prevIds, lamport, timestamp, seq, record)
  return { change: c, ground: c.id < below }
}

/** Flips 1 to 3 bytes of a real change: a different id, whatever else still parses. */
export function tamper(raw: Uint8Array, r: Prng): Uint8Array {
  const out = raw.slice()
  const n = 1 + r.int(3)
  for (let i = 0; i < n; i++) out[r.int(out.length)] ^= 1 + r.int(255)
  return out
}

/** An unsigned derived root of an object with a seed nobody expects. */
export const junkDerivedRoot = (spaceId: string, r: Prng): Change => derivedRoot(spaceId, encodeCanonical({ kind: 'object', seed: `junk-${toBase58(r.bytes(12))}` }))

/** A signed change whose parents never existed: it can only ever be parked. */
export function orphanChange(crypto: CryptoProvider, key: KeyPair, spaceId: string, treeId: string, aclHeadId: string, bytes: number, r: Prng): Promise<Change> {
  const parents = Array.from({ length: 1 + r.int(3) }, () => randomId(r))
  return signChange(crypto, key, {
    spaceId,
    treeId,
    prevIds: normalizePrevIds(parents),
    aclHeadId,
    seq: 1 + r.int(1_000_000),
    lamport: 1 + r.int(1000),
    timestamp: r.int(2 ** 40),
    readKeyId: randomId(r),
    payload: r.bytes(bytes),
  })
}

export const stepOf = (spaceId: string, req: number, changes: Uint8Array[], extra: Partial<StepMsg> = {}): StepMsg => ({
  type: 'step',
  spaceId,
  req,
  hop: 1,
  ranges: [],
  heads: [],
  wants: [],
  changes,
  ...extra,
})

/** Splits changes into steps under the target message size. */
export function stepsOf(spaceId: string, r: Prng, changes: Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = []
  let cur: Uint8Array[] = []
  let size = 0
  for (const c of changes) {
    if (cur.length && size + c.length > SYNC_LIMITS.targetMessageBytes) {
      out.push(encodeMessage(stepOf(spaceId, r.next(), cur)))
      cur = []
      size = 0
    }
    cur.push(c)
    size += c.length + 8
  }
  if (cur.length) out.push(encodeMessage(stepOf(spaceId, r.next(), cur)))
  return out
}

/**
 * Frames a hostile peer floods with: random bytes, truncated and bit-flipped valid messages,
 * wrong versions, unknown types, empty frames.
 */
export function malformedFrames(spaceId: string, r: Prng, n: number): Uint8Array[] {
  const valid = encodeMessage({ type: 'sync', spaceId, req: r.next(), fp: r.bytes(8), count: r.int(100) })
  const out: Uint8Array[] = []
  for (let i = 0; i < n; i++) {
    switch (r.int(6)) {
      case 0:
        out.push(r.bytes(1 + r.int(200)))
        break
      case 1:
        out.push(valid.subarray(0, r.int(valid.length)))
        break
      case 2:
        out.push(tamper(valid, r))
        break
      case 3:
        out.push(encodeCanonical([PROTOCOL_VERSION + 1 + r.int(5), 3, r.bytes(32)]))
        break
      case 4:
        out.push(encodeCanonical([PROTOCOL_VERSION, 50 + r.int(200), r.bytes(32), r.next()]))
        break
      default:
        out.push(new Uint8Array(0))
    }
  }
  return out
}

/** The most work one step may ask: `maxRangeItems` ranges, each the whole space, split. */
export function wholeSpaceRanges(spaceId: string, r: Prng): Message {
  const bits = Math.max(1, Math.floor(Math.log2(SYNC_LIMITS.maxRangeChildren / SYNC_LIMITS.maxRangeItems)))
  const ranges: RangeItem[] = Array.from({ length: SYNC_LIMITS.maxRangeItems }, () => ({ kind: 'fps', prefix: 0, len: 0, bits, fps: r.bytes(4 << bits) }))
  return { type: 'step', spaceId, req: r.next(), hop: 1, ranges, heads: [], wants: [], changes: [] }
}

/** Every count field at its limit: heads of unknown trees, and every position wanted. */
export function oversizedCounts(spaceId: string, r: Prng): Message[] {
  const heads = Array.from({ length: 64 }, () => ({ treeId: randomId(r), heads: Array.from({ length: 64 }, () => randomId(r)), have: [] as string[] }))
  const wants = Array.from({ length: SYNC_LIMITS.maxWants }, () => r.next())
  return [
    { type: 'sync', spaceId, req: r.next(), fp: r.bytes(8), count: 0 },
    { type: 'sync', spaceId, req: r.next(), fp: r.bytes(8), count: 0xffffffff },
    { type: 'step', spaceId, req: r.next(), hop: 0, ranges: [], heads, wants, changes: [] },
    // A hop field that claims the exchange just started, far into one.
    { type: 'step', spaceId, req: r.next(), hop: 0, ranges: [{ kind: 'fps', prefix: 0, len: 0, bits: 8, fps: r.bytes(4 << 8) }], heads: [], wants: [], changes: [] },
  ]
}
