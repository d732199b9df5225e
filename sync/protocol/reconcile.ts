import { ELEMENT_BYTES, RANGE_FP_BYTES, RANGE_TUNING, SYNC_LIMITS, WORK_UNITS } from './limits.ts'
import { decodeMessage, encodeMessage, type RangeElems, type RangeFps, type RangeItem, type StepMsg } from './messages.ts'
import { elementEntry, rangeFp, rootFpBytes, type Element, type RangeIndex } from './range-index.ts'
import { WorkBudget } from './work-budget.ts'

/**
 * Range reconciliation over two RangeIndexes, as pure functions of one side's index and the
 * other side's range items (docs/protocol.md, "Range reconciliation"). The session and the
 * benchmark both run exactly this code.
 *
 * Each side, given the other's child fingerprints, compares them with its own and, for every
 * child that differs, answers with either its elements in that child range (when it holds at
 * most `leafMax` there) or its own child fingerprints one split deeper. Given the other's
 * element list for a range, a side knows exactly which elements differ there: its own that the
 * other lacks or holds with other heads (`mine`), and positions of the other's it does not
 * match (`theirs`). Ranges narrow on every message, in both directions, as in Negentropy.
 */

export interface RangeAnswer {
  /** Range items for the reply: our side of every range that differs. */
  reply: RangeItem[]
  /** Our elements, in ranges the peer listed, that the peer lacks or holds with other heads. */
  mine: Element[]
  /** Positions of the peer's listed elements that we do not match, with how many at each. */
  theirs: Map<number, number>
}

export interface Tuning {
  leafMax: number
  leafTarget: number
}

/** How many bits to split a range of `count` elements by, to reach leaves quickly and cheaply. */
export function splitBits(count: number, len: number, tuning: Tuning = RANGE_TUNING): number {
  const room = SYNC_LIMITS.maxPrefixBits - len
  const needed = Math.max(1, Math.ceil(Math.log2(count / tuning.leafTarget)))
  // One split when it fits in a message's worth of children; otherwise half now, half next.
  const bits = needed <= SYNC_LIMITS.maxSplitBits ? needed : Math.ceil(needed / 2)
  return Math.max(1, Math.min(bits, SYNC_LIMITS.maxSplitBits, room))
}

/** What describing a range costs (WORK_UNITS): the elements listed, or the child fingerprints computed. */
export function describeCost(index: RangeIndex, prefix: number, len: number, tuning: Tuning = RANGE_TUNING): number {
  const count = index.count(prefix, len)
  if (count <= tuning.leafMax || len >= SYNC_LIMITS.maxPrefixBits) return WORK_UNITS.hash * Math.max(1, Math.min(count, SYNC_LIMITS.maxRangeElements))
  return WORK_UNITS.hash * (1 << splitBits(count, len, tuning))
}

/** Our item for a range that differs: our elements there, or our child fingerprints. */
export function describeRange(index: RangeIndex, salt: number, prefix: number, len: number, tuning: Tuning = RANGE_TUNING): RangeItem {
  const count = index.count(prefix, len)
  if (count <= tuning.leafMax || len >= SYNC_LIMITS.maxPrefixBits) {
    const els = index.elements(prefix, len).slice(0, SYNC_LIMITS.maxRangeElements)
    const elems = new Uint8Array(els.length * ELEMENT_BYTES)
    els.forEach((e, i) => elementEntry(salt, e, elems, i * ELEMENT_BYTES))
    return { kind: 'elems', prefix, len, elems } satisfies RangeElems
  }
  const bits = splitBits(count, len, tuning)
  const n = 1 << bits
  const fps = new Uint8Array(n * RANGE_FP_BYTES)
  for (let c = 0; c < n; c++) rangeFp(salt, index.fingerprint(prefix * n + c, len + bits), fps, c * RANGE_FP_BYTES)
  return { kind: 'fps', prefix, len, bits, fps } satisfies RangeFps
}

/** The whole-space fingerprint and count that open an exchange. */
export function openFingerprint(index: RangeIndex): { fp: Uint8Array; count: number } {
  const fp = index.fingerprint()
  return { fp: rootFpBytes(fp), count: fp.count }
}

/** True when the peer's whole-space fingerprint equals ours. */
export function rootMatches(index: RangeIndex, fp: Uint8Array, count: number): boolean {
  const ours = openFingerprint(index)
  if (ours.count !== count) return false
  for (let i = 0; i < fp.length; i++) if (fp[i] !== ours.fp[i]) return false
  return true
}

const key8 = (b: Uint8Array, o: number) => {
  let s = ''
  for (let i = 0; i < ELEMENT_BYTES; i++) s += String.fromCharCode(b[o + i])
  return s
}

/**
 * Compares the peer's range items with our index; see the module comment. Every item is
 * charged to `budget` before it is looked at (its children or the elements on both sides), and
 * every differing child again before it is described: items past the budget are left out.
 */
export function answerRanges(index: RangeIndex, salt: number, items: readonly RangeItem[], tuning: Tuning = RANGE_TUNING, budget = new WorkBudget(Infinity)): RangeAnswer {
  const out: RangeAnswer = { reply: [], mine: [], theirs: new Map() }
  const mine = new Uint8Array(RANGE_FP_BYTES)
  for (const item of items) {
    if (item.kind === 'fps') {
      const n = 1 << item.bits
      if (!budget.take(n * WORK_UNITS.hash)) break
      for (let c = 0; c < n; c++) {
        const prefix = item.prefix * n + c
        const len = item.len + item.bits
        rangeFp(salt, index.fingerprint(prefix, len), mine, 0)
        let same = true
        for (let i = 0; i < RANGE_FP_BYTES; i++) if (mine[i] !== item.fps[c * RANGE_FP_BYTES + i]) same = false
        if (!same && budget.take(describeCost(index, prefix, len, tuning))) out.reply.push(describeRange(index, salt, prefix, len, tuning))
      }
      continue
    }
    if (!budget.take(WORK_UNITS.hash * (item.elems.length / ELEMENT_BYTES + index.count(item.prefix, item.len)))) break
    // Element lists: match (position, salted hash) pairs as a multiset.
    const theirs = new Map<string, number>()
    const n = item.elems.length / ELEMENT_BYTES
    for (let i = 0; i < n; i++) {
      const k = key8(item.elems, i * ELEMENT_BYTES)
      theirs.set(k, (theirs.get(k) ?? 0) + 1)
    }
    const buf = new Uint8Array(ELEMENT_BYTES)
    for (const e of index.elements(item.prefix, item.len)) {
      elementEntry(salt, e, buf, 0)
      const k = key8(buf, 0)
      const left = theirs.get(k) ?? 0
      if (left > 0) theirs.set(k, left - 1)
      else out.mine.push(e)
    }
    for (const [k, left] of theirs) {
      if (left === 0) continue
      const pos = ((k.charCodeAt(0) << 24) | (k.charCodeAt(1) << 16) | (k.charCodeAt(2) << 8) | k.charCodeAt(3)) >>> 0
      out.theirs.set(pos, (out.theirs.get(pos) ?? 0) + left)
    }
  }
  return out
}

export interface ReconcileRun {
  /** Messages the initiator sent (the `sync` included): round trips. */
  roundTrips: number
  messages: number
  /** Encoded bytes from the initiator to the responder and back. */
  bytesOut: number
  bytesIn: number
  /** Elements each side found the other lacks or holds with other heads (ids of its own). */
  initiatorMine: string[]
  responderMine: string[]
  /** Positions of the other side's elements each side does not match. */
  initiatorTheirs: number[]
  responderTheirs: number[]
}

/**
 * Runs the range phase of an exchange between two indexes in memory, with the real message
 * encoding, until every differing range is resolved (benchmarks and tests; the session
 * interleaves the same steps with heads and changes).
 */
export function reconcileIndexes(a: RangeIndex, b: RangeIndex, opts: { spaceId: string; salt: number; tuning?: Tuning }): ReconcileRun {
  const run: ReconcileRun = { roundTrips: 1, messages: 1, bytesOut: 0, bytesIn: 0, initiatorMine: [], responderMine: [], initiatorTheirs: [], responderTheirs: [] }
  const { spaceId, salt, tuning } = opts
  const open = openFingerprint(a)
  run.bytesOut += encodeMessage({ type: 'sync', spaceId, req: salt, fp: open.fp, count: open.count }).length
  run.messages = 1
  if (rootMatches(b, open.fp, open.count)) {
    run.bytesIn += encodeMessage({ type: 'done', spaceId, req: salt }).length
    run.messages++
    return run
  }
  let items: RangeItem[] = [describeRange(b, salt, 0, 0, tuning)]
  let fromInitiator = false
  let hop = 1
  while (items.length) {
    const bytes = encodeMessage({ type: 'step', spaceId, req: salt, hop: hop++, ranges: items, heads: [], wants: [], changes: [] })
    run.messages++
    if (fromInitiator) {
      run.bytesOut += bytes.length
      run.roundTrips++
    } else run.bytesIn += bytes.length
    const msg = decodeMessage(bytes) as StepMsg
    const receiver = fromInitiator ? b : a
    const ans = answerRanges(receiver, salt, msg.ranges, tuning)
    const mine = ans.mine.map((e) => e.id)
    const theirs = [...ans.theirs.keys()]
    if (fromInitiator) {
      run.responderMine.push(...mine)
      run.responderTheirs.push(...theirs)
    } else {
      run.initiatorMine.push(...mine)
      run.initiatorTheirs.push(...theirs)
    }
    items = ans.reply
    fromInitiator = !fromInitiator
  }
  return run
}
