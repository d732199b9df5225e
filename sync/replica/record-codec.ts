import { decodeCanonical } from '../core/encoding.ts'
import { deepEqual, getPath } from '../crdt/path.ts'
import type { Json } from '../crdt/ops.ts'
import type { LogEntry, RecordState, Stamp, StampInfo } from '../crdt/record.ts'

/** A record as the replica stores it: merge state plus the local versionId that last wrote it. */
export interface StoredRecord extends RecordState {
  v: number
}

/** A stored record without its op log: what reads of values need (`decodeStoredHead`). */
export type StoredHead = Omit<StoredRecord, 'log'>

/** Change ids to and from the space's local numbers (change-numbers.ts). */
export interface ChangeNumbering {
  numOf(changeId: string): number
  idOf(n: number): string
}

/**
 * The byte form of a stored record. Records never leave the device (peers exchange changes,
 * not state), so their bytes need not be canonical; they are rewritten on every batch that
 * touches them, and JSON encodes them about 8x faster than canonical CBOR (21 µs against
 * 2.6 µs for a typical record, bench/core.ts's workload), which is most of the apply stage's
 * CPU beyond SQLite. Values are JSON by construction (ops carry Json). Everything that compares
 * state across peers (stateDigest, _ver.id) re-encodes canonically, from the decoded record.
 *
 * Layout (issue 42, "numbered"): a 0x02 byte, the head as JSON, a newline, then the op log as
 * JSON. JSON text never holds a raw newline (one inside a string is escaped), so the first
 * newline ends the head: a read that needs only values (opening a space reads every object's
 * row) parses the head and skips the log.
 *
 * Changes are named by the space's local number (change-numbers.ts), never by their 44-character
 * id, and what a record repeats is left out:
 * - head `{x?: value, c: created, m: modified, d?: deleted, f?: first, v, pending?, yt?}`. A
 *   stamp is `[lamport, number, index, author, timestamp]`, or only its index when it comes from
 *   the change `created` comes from (same lamport, author and time: they are the change's).
 *   `pending` and `yt` (ruled datasets before their create, text paths) keep ids as they are.
 * - log: one array per entry. Its stamp is `l, n` (lamport, number) unless it comes from the
 *   creating change, then `i` (the op's index; `-1 - i` marks an `unset`), the path, and the
 *   value of a `set` unless the record's value holds exactly that value at that path (the live
 *   log's common case: the op wrote what the path holds), where decoding takes it from there:
 *   `[i, p]`, `[i, p, v]`, `[l, n, i, p]`, `[l, n, i, p, v]`.
 *
 * A small object's row (a type, four short fields) is under a third of its former size: about
 * 1,050 bytes in layout 1, 330 in this one (test/space/record-layout.test.ts holds it to 400).
 *
 * Records written by earlier builds still read, with ids in full: layout 1 (a 0x01 byte, the
 * record without its log as JSON, a newline, the log as JSON), whole-record JSON (starts with
 * '{'), and canonical CBOR before that (a map starts with a byte in 0xa0-0xbf). A record is
 * written in this layout the next time a batch touches it.
 */
const enc = new TextEncoder()
const dec = new TextDecoder()
const OPEN_BRACE = 0x7b
const HEAD_LOG = 0x01
const NUMBERED = 0x02
const NEWLINE = 0x0a

/** `[l, n, i, a, t]`, and `tr` (the change's trace ids) sixth when it carried some. */
type PackedStamp = [number, number, number, string, number] | [number, number, number, string, number, string[]]
type PackedInfo = PackedStamp | number
/** See the layout above: `[i, p]`, `[i, p, v]`, `[l, n, i, p]`, `[l, n, i, p, v]`. */
type PackedEntry = [number, string] | [number, string, Json] | [number, number, number, string] | [number, number, number, string, Json]

interface PackedHead {
  x?: Json
  c: PackedStamp
  m: PackedInfo
  d?: PackedInfo
  f?: PackedInfo
  v: number
  pending?: StoredRecord['pending']
  yt?: StoredRecord['yt']
}

export function encodeStoredRecord(st: StoredRecord, nums: Pick<ChangeNumbering, 'numOf'>): Uint8Array {
  const created = st.created
  const head: PackedHead = { c: packStamp(created, nums), m: packInfo(st.modified, created, nums), v: st.v }
  if (st.value !== undefined) head.x = st.value
  if (st.deleted) head.d = packInfo(st.deleted, created, nums)
  if (st.first) head.f = packInfo(st.first, created, nums)
  if (st.pending) head.pending = st.pending
  if (st.yt) head.yt = st.yt
  const log: PackedEntry[] = new Array<PackedEntry>(st.log?.length ?? 0)
  for (let k = 0; k < log.length; k++) {
    const e = st.log[k]
    const i = e.k === 'set' ? e.s.i : -1 - e.s.i
    const implied = e.k !== 'set' || deepEqual(getPath(st.value, e.p), e.v)
    if (e.s.c === created.c && e.s.l === created.l) log[k] = implied ? [i, e.p] : [i, e.p, e.v]
    else {
      const n = nums.numOf(e.s.c)
      log[k] = implied ? [e.s.l, n, i, e.p] : [e.s.l, n, i, e.p, e.v]
    }
  }
  return enc.encode('\u0002' + JSON.stringify(head) + '\n' + JSON.stringify(log))
}

const packStamp = (s: StampInfo, nums: Pick<ChangeNumbering, 'numOf'>): PackedStamp =>
  s.tr?.length ? [s.l, nums.numOf(s.c), s.i, s.a, s.t, s.tr] : [s.l, nums.numOf(s.c), s.i, s.a, s.t]

/** The index alone when the stamp is the created change's (its trace ids are then the created stamp's). */
const packInfo = (s: StampInfo, created: StampInfo, nums: Pick<ChangeNumbering, 'numOf'>): PackedInfo => (s.c === created.c && s.l === created.l ? s.i : packStamp(s, nums))

/**
 * A stored record parsed, its change numbers not resolved yet: `numbersIn` lists them, the
 * caller brings them into its numbering (ChangeNumbers.fetch), `finishStored` builds the record.
 */
export type ParsedRecord = { full: StoredRecord } | { head: PackedHead; log: PackedEntry[] | undefined }

/** Parses a stored record of any layout; `withLog: false` skips the log where the layout allows. */
export function parseStored(bytes: Uint8Array, withLog: boolean): ParsedRecord {
  if (bytes[0] === NUMBERED) {
    const nl = bytes.indexOf(NEWLINE, 1)
    const head = JSON.parse(dec.decode(bytes.subarray(1, nl))) as PackedHead
    return { head, log: withLog ? (JSON.parse(dec.decode(bytes.subarray(nl + 1))) as PackedEntry[]) : undefined }
  }
  if (bytes[0] === HEAD_LOG) {
    const nl = bytes.indexOf(NEWLINE, 1)
    const st = JSON.parse(dec.decode(bytes.subarray(1, nl))) as StoredRecord
    if (withLog) st.log = JSON.parse(dec.decode(bytes.subarray(nl + 1))) as StoredRecord['log']
    return { full: st }
  }
  if (bytes[0] === OPEN_BRACE) return { full: JSON.parse(dec.decode(bytes)) as StoredRecord }
  return { full: decodeCanonical<StoredRecord>(bytes) }
}

/** The change numbers a parsed record names (none for the layouts that name ids in full). */
export function numbersIn(p: ParsedRecord, out: number[]): void {
  if ('full' in p) return
  const { head, log } = p
  out.push(head.c[1])
  if (typeof head.m !== 'number') out.push(head.m[1])
  if (head.d !== undefined && typeof head.d !== 'number') out.push(head.d[1])
  if (head.f !== undefined && typeof head.f !== 'number') out.push(head.f[1])
  if (log) for (const e of log) if (e.length >= 4) out.push(e[1] as number)
}

/** The record (with its log when it was parsed with it) once `nums` knows every number in it. */
export function finishStored(p: ParsedRecord, nums: Pick<ChangeNumbering, 'idOf'>): StoredHead & { log?: LogEntry[] } {
  if ('full' in p) return p.full
  const { head, log } = p
  const [l, n, i, a, t, tr] = head.c
  const created: StampInfo = { l, c: nums.idOf(n), a, t, i, ...(tr ? { tr } : {}) }
  const st: StoredHead & { log?: LogEntry[] } = { value: head.x, created, modified: unpackInfo(head.m, created, nums), v: head.v }
  if (head.d !== undefined) st.deleted = unpackInfo(head.d, created, nums)
  if (head.f !== undefined) st.first = unpackInfo(head.f, created, nums)
  if (head.pending) st.pending = head.pending
  if (head.yt) st.yt = head.yt
  if (log) st.log = log.map((e) => unpackEntry(e, created, st.value, nums))
  return st
}

function unpackInfo(p: PackedInfo, created: StampInfo, nums: Pick<ChangeNumbering, 'idOf'>): StampInfo {
  if (typeof p === 'number') return { l: created.l, c: created.c, a: created.a, t: created.t, i: p, ...(created.tr ? { tr: created.tr } : {}) }
  return { l: p[0], c: nums.idOf(p[1]), a: p[3], t: p[4], i: p[2], ...(p[5] ? { tr: p[5] } : {}) }
}

function unpackEntry(e: PackedEntry, created: StampInfo, value: Json | undefined, nums: Pick<ChangeNumbering, 'idOf'>): LogEntry {
  let s: Stamp
  let signed: number
  let p: string
  let v: Json | undefined
  let explicit: boolean
  if (e.length <= 3) {
    signed = e[0]
    p = e[1] as string
    explicit = e.length === 3
    v = explicit ? e[2] : undefined
    s = { l: created.l, c: created.c, i: signed < 0 ? -1 - signed : signed }
  } else {
    signed = e[2] as number
    p = e[3] as string
    explicit = e.length === 5
    v = explicit ? e[4] : undefined
    s = { l: e[0], c: nums.idOf(e[1] as number), i: signed < 0 ? -1 - signed : signed }
  }
  if (signed < 0) return { s, k: 'unset', p }
  return { s, k: 'set', p, v: explicit ? (v as Json) : (getPath(value, p) as Json) }
}

/** Decodes a whole record whose numbers `nums` knows (a numbering held in memory: tests, tools). */
export function decodeStoredRecord(bytes: Uint8Array, nums: Pick<ChangeNumbering, 'idOf'>): StoredRecord {
  return wholeRecord(parseStored(bytes, true), nums)
}

/** A record parsed with its log, finished: the log is always there (empty for a record without one). */
export function wholeRecord(p: ParsedRecord, nums: Pick<ChangeNumbering, 'idOf'>): StoredRecord {
  const st = finishStored(p, nums)
  st.log ??= []
  return st as StoredRecord
}

/** The record without its log, for a numbering that knows its numbers. */
export function decodeStoredHead(bytes: Uint8Array, nums: Pick<ChangeNumbering, 'idOf'>): StoredHead {
  return finishStored(parseStored(bytes, false), nums)
}

/** The local versionId that last wrote the record: its head's `v`, no change numbers needed. */
export function storedVersionOf(bytes: Uint8Array): number {
  const p = parseStored(bytes, false)
  return ('full' in p ? p.full.v : p.head.v) ?? 0
}

/** A numbering held wholly in memory (tests and tools that encode records outside a replica). */
export class MemoryNumbering implements ChangeNumbering {
  /** The ids numbered so far: number n is `ids[n - 1]`. */
  readonly ids: string[] = []
  private readonly nums = new Map<string, number>()
  numOf(changeId: string): number {
    let n = this.nums.get(changeId)
    if (n === undefined) {
      this.ids.push(changeId)
      this.nums.set(changeId, (n = this.ids.length))
    }
    return n
  }
  idOf(n: number): string {
    const id = this.ids[n - 1]
    if (id === undefined) throw new Error(`unknown change number ${n}`)
    return id
  }
}
