/**
 * Block diff: current blocks (with ids and positions) against the drafts of the next version,
 * as per-block ops.
 *
 * 1. Blocks compare by a content key (type, style, text, checked, rows, depth; never id or pos).
 * 2. The longest common subsequence of keys (common prefix/suffix trimmed, then Myers O(ND);
 *    past an edit distance of 2,000, unique keys in agreeing order instead) is kept as is.
 * 3. Blocks with identical content that left the common subsequence moved: one update of
 *    `nav.pos` each (identity kept).
 * 4. In every gap between kept blocks the remaining old and new blocks are paired in order,
 *    most similar first, as in-place updates (only the changed fields are set or unset); what is
 *    left over is deleted or inserted.
 * 5. Inserted (and moved) runs get positions between their surviving neighbours.
 *
 * Changing one block of a 1,000-block document therefore yields exactly one update.
 */
import type { Block, BlockDraft, BlockUpdate, DiffResult, EditSummary, PosGen } from './types.ts'
import { isValidPos, positionsBetween } from './position.ts'
import { sortBlocks } from './render.ts'

type AnyBlock = Block | BlockDraft

const depthOf = (b: AnyBlock): number => {
  const d = b.nav?.depth
  return typeof d === 'number' && Number.isInteger(d) && d > 0 ? d : 0
}
const styleOf = (b: AnyBlock): string | undefined => (b.style === undefined || b.style === null ? undefined : String(b.style))
const textOf = (b: AnyBlock): string => (typeof b.text === 'string' ? b.text : '')
const posOf = (b: Block): string | undefined => {
  const p = b.nav?.pos
  return isValidPos(p) ? p : undefined
}

/** The content key a block is compared by. Equal keys render identically. */
export function contentKey(b: AnyBlock, depth: number = depthOf(b)): string {
  const checked = b.checked === undefined ? '' : b.checked ? '1' : '0'
  return `${b.type}\u0001${styleOf(b) ?? ''}\u0001${textOf(b)}\u0001${checked}\u0001${b.rows === undefined ? '' : JSON.stringify(b.rows)}\u0001${depth}`
}

/** Field-level changes from `old` to `next` (only the fields this module owns). */
export function blockChanges(old: AnyBlock, next: BlockDraft): { set: Record<string, unknown>; unset: string[] } {
  const set: Record<string, unknown> = {}
  const unset: string[] = []
  if (old.type !== next.type) set.type = next.type
  const so = styleOf(old)
  const sn = styleOf(next)
  if (sn === undefined) {
    if (old.style !== undefined) unset.push('style')
  } else if (so !== sn || typeof old.style !== 'string') set.style = sn
  if (next.text === undefined) {
    if (old.text !== undefined) unset.push('text')
  } else if (old.text !== next.text) set.text = next.text
  if (next.checked === undefined) {
    if (old.checked !== undefined) unset.push('checked')
  } else if (old.checked !== next.checked) set.checked = next.checked
  if (next.rows === undefined) {
    if (old.rows !== undefined) unset.push('rows')
  } else if (old.rows === undefined || JSON.stringify(old.rows) !== JSON.stringify(next.rows)) set.rows = next.rows
  const dOld = depthOf(old)
  const dNew = depthOf(next)
  if (dNew === 0) {
    if (old.nav?.depth !== undefined) unset.push('nav.depth')
  } else if (dOld !== dNew || old.nav?.depth !== dNew) set['nav.depth'] = dNew
  return { set, unset }
}

// ---------------------------------------------------------------------------------------------
// Longest common subsequence

/** Myers' O(ND) greedy LCS; null if the edit distance exceeds maxD. Pairs are increasing. */
function myers(a: Int32Array, b: Int32Array, maxD: number): [number, number][] | null {
  const n = a.length
  const m = b.length
  const max = n + m
  if (max === 0) return []
  const off = max + 1
  const v = new Int32Array(2 * max + 3)
  const trace: Int32Array[] = []
  for (let d = 0; d <= Math.min(max, maxD); d++) {
    trace.push(v.slice(off - d - 1, off + d + 2))
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1
      let y = x - k
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      v[off + k] = x
      if (x >= n && y >= m) return backtrack(trace, d, n, m)
    }
  }
  return null
}

function backtrack(trace: Int32Array[], dEnd: number, n: number, m: number): [number, number][] {
  const pairs: [number, number][] = []
  let x = n
  let y = m
  for (let d = dEnd; d >= 0; d--) {
    const vd = trace[d] // v as it was before step d; k in [-d-1, d+1] lives at k + d + 1
    const at = (k: number) => vd[k + d + 1]
    const k = x - y
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1
    const prevX = at(prevK)
    const prevY = prevX - prevK
    while (x > prevX && y > prevY) {
      x--
      y--
      pairs.push([x, y])
    }
    if (d > 0) {
      x = prevX
      y = prevY
    }
  }
  return pairs.reverse()
}

/**
 * Fallback for very different sequences: keys occurring exactly once on each side, kept where
 * their order agrees (longest increasing subsequence). Not minimal, but O(n log n).
 */
function patience(a: Int32Array, b: Int32Array): [number, number][] {
  const count = new Map<number, number>()
  for (const k of a) count.set(k, (count.get(k) ?? 0) + 1)
  const inB = new Map<number, number>()
  const dupB = new Set<number>()
  b.forEach((k, j) => {
    if (inB.has(k)) dupB.add(k)
    inB.set(k, j)
  })
  const cand: [number, number][] = []
  a.forEach((k, i) => {
    if (count.get(k) === 1 && inB.has(k) && !dupB.has(k)) cand.push([i, inB.get(k)!])
  })
  // LIS on j (cand is sorted by i)
  const tails: number[] = []
  const prev = new Int32Array(cand.length).fill(-1)
  for (let c = 0; c < cand.length; c++) {
    let lo = 0
    let hi = tails.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cand[tails[mid]][1] < cand[c][1]) lo = mid + 1
      else hi = mid
    }
    if (lo > 0) prev[c] = tails[lo - 1]
    tails[lo] = c
  }
  const out: [number, number][] = []
  for (let c = tails.length ? tails[tails.length - 1] : -1; c >= 0; c = prev[c]) out.push(cand[c])
  return out.reverse()
}

/** LCS pairs of two key arrays (trimmed prefix/suffix, then Myers; none if too different). */
function lcs(a: Int32Array, b: Int32Array): [number, number][] {
  let pre = 0
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++
  let suf = 0
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++
  const out: [number, number][] = []
  for (let i = 0; i < pre; i++) out.push([i, i])
  const midA = a.subarray(pre, a.length - suf)
  const midB = b.subarray(pre, b.length - suf)
  if (midA.length > 0 && midB.length > 0) {
    const mid = myers(midA, midB, 2000) ?? patience(midA, midB)
    for (const [i, j] of mid) out.push([i + pre, j + pre])
  }
  for (let s = suf; s > 0; s--) out.push([a.length - s, b.length - s])
  return out
}

// ---------------------------------------------------------------------------------------------
// Pairing inside a gap

function textSimilarity(x: string, y: string): number {
  if (x === y) return 1
  const max = Math.max(x.length, y.length)
  if (max === 0) return 1
  let p = 0
  const lim = Math.min(x.length, y.length)
  while (p < lim && x.charCodeAt(p) === y.charCodeAt(p)) p++
  let s = 0
  while (s < lim - p && x.charCodeAt(x.length - 1 - s) === y.charCodeAt(y.length - 1 - s)) s++
  return (p + s) / max
}

function similarity(o: AnyBlock, n: BlockDraft): number {
  const typeFactor = o.type === n.type ? 1 : 0.5
  const ot = o.rows ? JSON.stringify(o.rows) : textOf(o)
  const nt = n.rows ? JSON.stringify(n.rows) : textOf(n)
  return typeFactor * textSimilarity(ot, nt) + (depthOf(o) === depthOf(n) ? 0.01 : 0)
}

/** Pairs (old offset, new offset) for a gap: min(k, m) pairs, in order, most similar alignment. */
function pairGap(old: AnyBlock[], next: BlockDraft[]): [number, number][] {
  const k = old.length
  const m = next.length
  if (k === 0 || m === 0) return []
  if (k === 1 && m === 1) return [[0, 0]]
  if (k * m > 2500) {
    const out: [number, number][] = []
    for (let i = 0; i < Math.min(k, m); i++) out.push([i, i])
    return out
  }
  // DP maximizing (pairs, then similarity): each pair scores 100 + sim, sim < 2.
  const w = m + 1
  const best = new Float64Array((k + 1) * w)
  for (let i = 1; i <= k; i++) {
    for (let j = 1; j <= m; j++) {
      const diag = best[(i - 1) * w + j - 1] + 100 + similarity(old[i - 1], next[j - 1])
      best[i * w + j] = Math.max(best[(i - 1) * w + j], best[i * w + j - 1], diag)
    }
  }
  const out: [number, number][] = []
  let i = k
  let j = m
  while (i > 0 && j > 0) {
    const here = best[i * w + j]
    if (here === best[(i - 1) * w + j]) i--
    else if (here === best[i * w + j - 1]) j--
    else {
      out.push([i - 1, j - 1])
      i--
      j--
    }
  }
  return out.reverse()
}

// ---------------------------------------------------------------------------------------------

type Slot = { kind: 'keep'; old: number } | { kind: 'update'; old: number } | { kind: 'insert' } | { kind: 'move'; old: number }

export interface DiffBounds {
  /** Position of the block right before `current` (when diffing a window of a document). */
  before?: string
  /** Position of the block right after `current`. */
  after?: string
  /** Positions of other live blocks (not in `current`) that new positions must not repeat. */
  avoid?: ReadonlySet<string>
}

/**
 * Per-block ops turning `current` (sorted by nav.pos; sorted here if not) into `next`.
 * `newPos` makes positions for inserted and moved blocks (see positionsBetween).
 */
export function diffBlocks(current: Block[], next: BlockDraft[], newPos: PosGen, bounds: DiffBounds = {}): DiffResult {
  const cur = sortBlocks(current)
  const intern = new Map<string, number>()
  const id = (key: string): number => {
    let v = intern.get(key)
    if (v === undefined) {
      v = intern.size
      intern.set(key, v)
    }
    return v
  }
  const a = Int32Array.from(cur, (b) => id(contentKey(b)))
  const b = Int32Array.from(next, (d) => id(contentKey(d)))
  const matches = lcs(a, b)

  const slots: Slot[] = new Array<Slot>(next.length)
  const oldTaken = new Uint8Array(cur.length)
  for (const [i, j] of matches) {
    slots[j] = { kind: 'keep', old: i }
    oldTaken[i] = 1
  }
  // Moves: identical content outside the common subsequence.
  const loose = new Map<number, number[]>()
  for (let i = 0; i < cur.length; i++) {
    if (oldTaken[i]) continue
    const q = loose.get(a[i])
    if (q) q.push(i)
    else loose.set(a[i], [i])
  }
  for (let j = 0; j < next.length; j++) {
    if (slots[j]) continue
    const q = loose.get(b[j])
    if (q && q.length > 0) {
      const i = q.shift()!
      slots[j] = { kind: 'move', old: i }
      oldTaken[i] = 1
    }
  }
  // Gaps between kept blocks: pair the rest as in-place updates.
  const anchors: [number, number][] = [...matches, [cur.length, next.length]]
  let pi = 0
  let pj = 0
  for (const [mi, mj] of anchors) {
    const oldIdx: number[] = []
    for (let i = pi; i < mi; i++) if (!oldTaken[i]) oldIdx.push(i)
    const newIdx: number[] = []
    for (let j = pj; j < mj; j++) if (!slots[j]) newIdx.push(j)
    for (const [x, y] of pairGap(
      oldIdx.map((i) => cur[i]),
      newIdx.map((j) => next[j]),
    )) {
      slots[newIdx[y]] = { kind: 'update', old: oldIdx[x] }
      oldTaken[oldIdx[x]] = 1
    }
    for (const j of newIdx) if (!slots[j]) slots[j] = { kind: 'insert' }
    pi = mi + 1
    pj = mj + 1
  }

  // Positions. Anchors (keep/update) keep theirs; runs of inserts and moves between anchors get
  // fresh ones. An anchor whose position is unusable (missing, malformed, or not after the
  // previous anchor) joins the run and is repositioned.
  const newPosOf = new Map<number, string>()
  const reposition = new Set<number>()
  const lowBound = bounds.before !== undefined && isValidPos(bounds.before) ? bounds.before : undefined
  let highBound = bounds.after !== undefined && isValidPos(bounds.after) ? bounds.after : undefined
  // Duplicate positions around the window (only a misbehaving writer makes them): no room between.
  if (lowBound !== undefined && highBound !== undefined && lowBound >= highBound) highBound = undefined
  let lastPos = lowBound
  let run: number[] = []
  const flush = (after: string | undefined) => {
    if (run.length === 0) return
    let keys = positionsBetween(newPos, lastPos, after, run.length)
    for (let guard = 0; bounds.avoid && guard < 8; guard++) {
      const hit = keys.find((key) => bounds.avoid!.has(key))
      if (hit === undefined) break
      after = hit
      keys = positionsBetween(newPos, lastPos, after, run.length)
    }
    run.forEach((j, k) => newPosOf.set(j, keys[k]))
    lastPos = keys[keys.length - 1]
    run = []
  }
  for (let j = 0; j < next.length; j++) {
    const s = slots[j]
    if (s.kind === 'keep' || s.kind === 'update') {
      const p = posOf(cur[s.old])
      if (p !== undefined && (lastPos === undefined || p > lastPos) && (highBound === undefined || p < highBound)) {
        flush(p)
        lastPos = p
        continue
      }
      reposition.add(j)
    }
    run.push(j)
  }
  flush(highBound)

  const result: DiffResult = { inserts: [], updates: [], deletes: [], unchanged: 0 }
  for (let j = 0; j < next.length; j++) {
    const s = slots[j]
    if (s.kind === 'insert') {
      result.inserts.push({ draft: next[j], pos: newPosOf.get(j)! })
      continue
    }
    const old = cur[s.old]
    const moved = s.kind === 'move' || reposition.has(j)
    const change: BlockUpdate = s.kind === 'update' ? { id: old.id, ...blockChanges(old, next[j]) } : { id: old.id, set: {}, unset: [] }
    if (moved) change.set['nav.pos'] = newPosOf.get(j)!
    if (Object.keys(change.set).length === 0 && change.unset.length === 0) result.unchanged++
    else result.updates.push(change)
  }
  for (let i = 0; i < cur.length; i++) if (!oldTaken[i]) result.deletes.push(cur[i].id)
  return result
}

/** The PUT/PATCH/append response counts. */
export function summarize(diff: DiffResult): EditSummary {
  return { inserted: diff.inserts.length, updated: diff.updates.length, deleted: diff.deletes.length, unchanged: diff.unchanged }
}
