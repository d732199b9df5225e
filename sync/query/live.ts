import { SvcError } from '../core/errors.ts'
import { DEFAULT_DRIFT_BUDGET_PERCENT, MAX_DRIFT_BUDGET_PERCENT } from '../core/limits.ts'
import type { FrameOp } from './projection.ts'
import { type CompiledQuery, compileQuery, type QueryOptions, type QueryResult, select, withSourceText } from './snapshot.ts'
import type { Entry } from './sort.ts'
import type { QuerySource } from './source.ts'
import { type Doc, valuesEqual } from './values.ts'

/**
 * Live windows: the state behind a windowed query/subscribe stream.
 *
 * A LiveWindow is built from the initial documents (which gives the snapshot frame), then fed
 * every write as a {@link ChangeSet}; `apply` returns the `changes` entry for that write, or
 * null when nothing visible in the window changed.
 *
 * Memory model: the window does NOT keep the whole matching set. It holds an exact sorted
 * prefix of it: the `offset` entries before the window, the `limit` entries of the window and
 * up to `reserve` entries after it (default: `limit`, at least 16), each an {id, doc ref, sort
 * key} triple, so memory is O(offset + limit + reserve) entries whatever the dataset size
 * (about 100 bytes per entry plus the documents, which are shared with the caller). Invariant:
 * the held entries are exactly the matching documents that sort at or before the "horizon"
 * (the last held entry once something was dropped past it); documents sorting after the
 * horizon are unknown. Hence:
 *   - a write that makes a document match and sort before the horizon is exact (it enters);
 *   - one that sorts after the horizon is ignored (it is beyond anything we could show);
 *   - departures from the window are replaced from the reserve; when the reserve is exhausted
 *     the window shrinks and, without a refill callback, the shortfall counts as drift.
 * Pass `refill` (returns the current documents, e.g. the collection's QuerySource) to re-select
 * the held prefix instead of drifting: exact at the cost of one (possibly indexed) scan per
 * `reserve` departures. `reserve: Infinity` holds every match: exact, never drifts, O(matches).
 * A query without `limit` always holds every match.
 *
 * Drift: with the held prefix incomplete and no refill, `drifted` turns true as soon as the
 * window is short by more than `driftBudgetPercent` (default 30) percent of `limit`. The frame
 * of that write is still returned; the caller then closes the stream with reason `drifted`.
 * Once drifted, `apply` returns null.
 *
 * Frames: `removed` reasons are `deleted` (id in `deletes`), `filtered-out` (upserted and no
 * longer matching) and `displaced` (still matching, now outside the window: pushed past the
 * limit, or before the offset). A record moving into the window (new, or pulled in from below
 * the limit) is in `added`. A record that stays in the window and was upserted is in `updated`
 * when its projected document changed. `doc` is projected; `ops` are the caller's ops for that
 * id (projected; hidden paths dropped), or `[]` when none were given.
 */

export interface ChangeSet {
  versionId: string
  /** Full post-change documents of every record the write touched (and that still exists). */
  upserts: Doc[]
  /** Ids tombstoned by the write. */
  deletes: string[]
}

export type RemoveReason = 'deleted' | 'filtered-out' | 'displaced'

export interface FrameEntry {
  id: string
  doc: Doc
  ops: FrameOp[]
}

export interface ChangesFrame {
  versionId: string
  added: FrameEntry[]
  updated: FrameEntry[]
  removed: Array<{ id: string; reason: RemoveReason }>
}

export interface LiveWindowOptions {
  /** Percent of `limit` the window may fall short by before `drifted`; default 30. */
  driftBudgetPercent?: number
  /** Matches held beyond the window; default `limit` (at least 16). Infinity holds all. */
  reserve?: number
  /** Current documents, read when the held prefix runs short (instead of drifting). */
  refill?: () => Iterable<Doc> | QuerySource
}

export { DEFAULT_DRIFT_BUDGET_PERCENT }
export const MIN_RESERVE = 16

export function checkDriftBudget(v: unknown): number {
  if (v === undefined || v === null) return DEFAULT_DRIFT_BUDGET_PERCENT
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_DRIFT_BUDGET_PERCENT) {
    throw new SvcError('request.invalid_field', `driftBudgetPercent must be a number from 0 to ${MAX_DRIFT_BUDGET_PERCENT}`, { field: 'driftBudgetPercent' })
  }
  return v
}

export class LiveWindow {
  readonly query: CompiledQuery
  /** The snapshot frame body: `{records, total?, hasNext?}`. */
  readonly snapshot: QueryResult
  readonly driftBudgetPercent: number
  private readonly lo: number
  private readonly hi: number
  private readonly cap: number
  private readonly refill: LiveWindowOptions['refill']
  private held: Entry[] = []
  private byId = new Map<string, Entry>()
  /** True when `held` is every matching document (nothing beyond the horizon). */
  private isComplete = true
  private horizon: Entry | undefined
  private isDrifted = false

  constructor(source: Iterable<Doc> | QuerySource, query: QueryOptions | CompiledQuery, options: LiveWindowOptions = {}) {
    // A source's text index answers `$text` in later updates as it did in the snapshot.
    const q = (this.query = withSourceText(compileQuery(query), source))
    this.driftBudgetPercent = checkDriftBudget(options.driftBudgetPercent)
    const reserve = options.reserve ?? Math.max(q.limit ?? 0, MIN_RESERVE)
    if (!(reserve >= 0) || (reserve !== Infinity && !Number.isSafeInteger(reserve))) throw new RangeError('reserve must be a non-negative integer or Infinity')
    this.lo = q.offset
    this.hi = q.limit === undefined ? Infinity : q.offset + q.limit
    this.cap = this.hi + reserve
    this.refill = options.refill
    const total = this.load(source)
    const records = this.window().map((e) => q.projection.apply(e.doc))
    this.snapshot = { records }
    if (q.includeTotal) {
      this.snapshot.total = total
      this.snapshot.hasNext = this.lo + records.length < total
    }
  }

  /** True once the window fell short beyond the drift budget; close the stream with `drifted`. */
  get drifted(): boolean {
    return this.isDrifted
  }

  /** True when every matching document is held (no drift possible). */
  get complete(): boolean {
    return this.isComplete
  }

  /** Number of entries held (prefix before the offset, window, reserve). */
  get heldCount(): number {
    return this.held.length
  }

  /** Ids in the window, in order. */
  windowIds(): string[] {
    return this.window().map((e) => e.id)
  }

  /**
   * True when both windows show the same documents (same ids, same document objects) in the
   * same order. Two windows of one query that refill from one source and agree here produce
   * the same frame for every later write.
   */
  sameWindow(other: LiveWindow): boolean {
    const a = this.window()
    const b = other.window()
    if (a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (a[i].id !== b[i].id || a[i].doc !== b[i].doc) return false
    return true
  }

  /** Projected records in the window, in order (what a fresh snapshot's page would hold). */
  records(): Doc[] {
    return this.window().map((e) => this.query.projection.apply(e.doc))
  }

  /**
   * Applies one write. Returns its `changes` entry, or null when the window did not change
   * visibly (or the window already drifted).
   */
  apply(change: ChangeSet, opsById?: ReadonlyMap<string, readonly FrameOp[]>): ChangesFrame | null {
    if (this.isDrifted) return null
    const q = this.query
    const before = this.window()
    const reasons = new Map<string, RemoveReason>()
    const touched = new Map<string, Doc | undefined>() // id -> previous doc when held

    const deleted = new Set(change.deletes)
    for (const id of deleted) {
      reasons.set(id, 'deleted')
      const e = this.byId.get(id)
      touched.set(id, e?.doc)
      if (e) this.removeEntry(e)
    }
    for (const doc of change.upserts) {
      const id = doc?.id
      if (typeof id !== 'string' || deleted.has(id)) continue
      const old = this.byId.get(id)
      if (!touched.has(id)) touched.set(id, old?.doc)
      if (old) this.removeEntry(old)
      if (!q.filter.test(doc)) {
        reasons.set(id, 'filtered-out')
        continue
      }
      reasons.delete(id)
      const e = q.sort.entry(doc)
      // Past the horizon it sorts after documents we do not know: leave it unknown too.
      if (this.isComplete || (this.horizon !== undefined && q.sort.compare(e, this.horizon) <= 0)) this.insertEntry(e)
    }
    this.trim()
    if (!this.isComplete && this.held.length < this.hi) {
      if (this.refill) {
        this.load(this.refill())
      } else if (this.hi !== Infinity) {
        const limit = this.hi - this.lo
        const short = Math.min(limit, this.hi - this.held.length)
        if (short * 100 > this.driftBudgetPercent * limit) this.isDrifted = true
      }
    }

    const after = this.window()
    const beforeIds = new Map(before.map((e) => [e.id, e]))
    const afterIds = new Set(after.map((e) => e.id))
    const frame: ChangesFrame = { versionId: change.versionId, added: [], updated: [], removed: [] }
    const opsFor = (id: string): FrameOp[] => {
      const ops = opsById?.get(id)
      if (!ops) return []
      const out: FrameOp[] = []
      for (const o of ops) {
        const p = q.projection.op(o)
        if (p) out.push(p)
      }
      return out
    }
    for (const e of before) {
      if (!afterIds.has(e.id)) frame.removed.push({ id: e.id, reason: reasons.get(e.id) ?? 'displaced' })
    }
    for (const e of after) {
      const prev = beforeIds.get(e.id)
      if (!prev) {
        frame.added.push({ id: e.id, doc: q.projection.apply(e.doc), ops: touched.has(e.id) ? opsFor(e.id) : [] })
      } else if (touched.has(e.id) && prev.doc !== e.doc) {
        const doc = q.projection.apply(e.doc)
        if (!valuesEqual(doc, q.projection.apply(prev.doc))) frame.updated.push({ id: e.id, doc, ops: opsFor(e.id) })
      }
    }
    if (frame.added.length === 0 && frame.updated.length === 0 && frame.removed.length === 0) return null
    return frame
  }

  private window(): Entry[] {
    return this.held.slice(this.lo, this.hi)
  }

  /** (Re)selects the held prefix from a full source; returns the number of matches. */
  private load(source: Iterable<Doc> | QuerySource): number {
    const { top, total } = select(source, this.query, this.cap)
    this.held = top
    this.byId = new Map(top.map((e) => [e.id, e]))
    this.isComplete = total <= top.length
    this.horizon = this.isComplete ? undefined : top[top.length - 1]
    return total
  }

  /** Drops entries past the cap; what is dropped becomes unknown (the horizon moves in). */
  private trim(): void {
    if (this.held.length <= this.cap) return
    for (const e of this.held.splice(this.cap)) this.byId.delete(e.id)
    this.isComplete = false
    this.horizon = this.held[this.held.length - 1]
  }

  /** First index whose entry is not before `e`. */
  private lowerBound(e: Entry): number {
    const cmp = this.query.sort.compare
    let a = 0
    let b = this.held.length
    while (a < b) {
      const m = (a + b) >>> 1
      if (cmp(this.held[m], e) < 0) a = m + 1
      else b = m
    }
    return a
  }

  private insertEntry(e: Entry): void {
    this.held.splice(this.lowerBound(e), 0, e)
    this.byId.set(e.id, e)
  }

  private removeEntry(e: Entry): void {
    let i = this.lowerBound(e)
    if (this.held[i] !== e) i = this.held.indexOf(e)
    if (i >= 0) this.held.splice(i, 1)
    this.byId.delete(e.id)
  }
}
