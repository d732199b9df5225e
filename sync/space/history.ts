import { decodeCanonical } from '../core/encoding.ts'
import { SvcError } from '../core/errors.ts'
import { DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT } from '../core/limits.ts'
import { open } from '../crypto/box.ts'
import { decodeChange } from '../dag/change.ts'
import { CHANGE_DERIVED_ID, type ChangePayload, type Json, type Op } from '../crdt/ops.ts'
import { propertyIdSync } from '../crypto/hash.ts'
import { mergeOpOf } from '../crdt/ytext-fold.ts'
import { applyToRecord, type MergePolicy, type RecordState } from '../crdt/record.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import { instant } from './rows.ts'
import { errField, silentLogger, type Logger } from '../core/log.ts'

/**
 * Datasets whose changes version history leaves out when none is given: chat's (spec: chat
 * keeps no history). A space's History takes its modules' (ModuleSet.keepsHistory).
 */
/**
 * The object's own fields (name, tags, type values: the row record, dataset "" and id "")
 * appear in history as `datasets: [""]` and `{dataset: "", id: ""}`. An empty name cannot be a
 * path segment, so routes and query strings also accept this alias for both (docs/api.md
 * "Version history"); writes to a dataset of that name are refused (space-engine `modify`).
 */
export const ROW_ALIAS = '@row'

/** A dataset or record id as a client names it in history routes: the alias is the row's "". */
export const unaliasRow = (name: string): string => (name === ROW_ALIAS ? '' : name)

export const NO_HISTORY_DATASETS: ReadonlySet<string> = new Set(['chat_messages'])
const keepsDefault = (ds: string) => !NO_HISTORY_DATASETS.has(ds)

export const HISTORY_LIMITS = {
  defaultLimit: DEFAULT_HISTORY_LIMIT,
  maxLimit: MAX_HISTORY_LIMIT,
  /** Default burst window for `coalesce`: one author's changes closer than this merge. */
  defaultCoalesceWindowMs: 60_000,
  /** Most records `GET {O}/history/:version` returns before 413 `history.view_too_large`. */
  maxViewRecords: 5_000,
} as const

/** One change of an object, as history lists it (field set of our design: "not shown"). */
export interface HistoryEntry {
  version: string
  author: string
  timestamp: { $date: string }
  lamport: number
  parents: string[]
  datasets: string[]
  recordIds: Array<{ dataset: string; id: string }>
  traceIds: string[]
  opCount: number
  /** With `coalesce`: the versions this entry stands for (newest first), itself included. */
  versions?: string[]
}

interface Decoded {
  id: string
  lamport: number
  author: string
  timestamp: number
  prevIds: string[]
  ops: Op[]
  traceIds: string[]
}

export interface HistoryQuery {
  dataset?: string
  recordId?: string
  traceId?: string
  author?: string
  limit?: number
  cursor?: string
  coalesce?: boolean
  coalesceWindowMs?: number
}

/** One tree's decoded changes, newest first. */
interface TreeHistory {
  list: Decoded[]
  byId: Map<string, Decoded>
  /** Catch-ups run one at a time, so a read never returns before an earlier read's catch-up. */
  ready: Promise<void>
}

/** Above this many new changes, one re-sort beats inserting them one by one. */
const INSERT_LIMIT = 64

/**
 * Version history of one space's objects, read from the DAG itself. Payloads are opened once
 * per change and cached per tree; a commit only notes its change ids, and the next read opens
 * just those and inserts them in place. So a read of an object under constant writing costs
 * the new changes, not a re-decryption of its whole history.
 */
export class History {
  private readonly cache = new Map<string, Promise<TreeHistory>>()
  /** Per cached (or loading) tree, change ids committed since it was read. */
  private readonly pending = new Map<string, Set<string>>()

  constructor(
    private readonly replica: SpaceReplica,
    private readonly policy: MergePolicy,
    /** Whether a dataset's changes are part of history (modules may keep theirs out). */
    readonly keeps: (ds: string) => boolean = keepsDefault,
    private readonly log: Logger = silentLogger,
  ) {
    replica.addCommitListener((info) => {
      for (const t of info.rebuiltTrees) this.forget(t)
      for (const t of info.treeIds) {
        // Ids of the batch's other trees are harmless: they are not found under this tree.
        const p = this.pending.get(t)
        if (p) for (const id of info.changeIds) p.add(id)
      }
    })
  }

  private forget(objectId: string) {
    this.cache.delete(objectId)
    this.pending.delete(objectId)
  }

  private async load(objectId: string): Promise<TreeHistory> {
    let c = this.cache.get(objectId)
    if (!c) {
      // Noted before the read starts: commits landing meanwhile are caught up on (duplicates skipped).
      this.pending.set(objectId, new Set())
      const loading = this.readTree(objectId)
      this.cache.set(objectId, (c = loading))
      loading.catch(() => this.cache.get(objectId) === loading && this.forget(objectId))
    }
    const h = await c
    // The caller that awaited a failed catch-up was told; the next one tries again.
    h.ready = h.ready.catch((err: unknown) => this.log.debug('an earlier history catch-up failed', { objectId, err: errField(err) })).then(() => this.catchUp(objectId, h))
    await h.ready
    return h
  }

  private async readTree(objectId: string): Promise<TreeHistory> {
    const idx = await this.replica.treeIndex(objectId)
    const list = await this.decode(
      objectId,
      idx.missingFrom([]).map((n) => n.id),
    )
    list.sort(newestFirst)
    return { list, byId: new Map(list.map((d) => [d.id, d])), ready: Promise.resolve() }
  }

  /** Opens the changes committed since the tree was read and inserts them in order. */
  private async catchUp(objectId: string, h: TreeHistory): Promise<void> {
    const pending = this.pending.get(objectId)
    if (!pending || pending.size === 0) return
    const ids = [...pending]
    const fresh = (
      await this.decode(
        objectId,
        ids.filter((id) => !h.byId.has(id)),
      )
    ).filter((d) => !h.byId.has(d.id))
    for (const id of ids) pending.delete(id)
    for (const d of fresh) h.byId.set(d.id, d)
    if (fresh.length > INSERT_LIMIT) {
      h.list.push(...fresh)
      h.list.sort(newestFirst)
      return
    }
    for (const d of fresh) {
      let lo = 0
      let hi = h.list.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (newestFirst(h.list[mid], d) < 0) lo = mid + 1
        else hi = mid
      }
      h.list.splice(lo, 0, d)
    }
  }

  /** The non-root changes among `ids` that this tree holds, opened (unreadable ones left out). */
  private async decode(objectId: string, ids: readonly string[]): Promise<Decoded[]> {
    const out: Decoded[] = []
    if (ids.length === 0) return out
    for (const { raw } of await this.replica.rawChanges(objectId, ids)) {
      const ch = decodeChange(raw)
      if (ch.prevIds.length === 0) continue
      const key = this.replica.keyring.get(ch.readKeyId)
      if (!key) continue
      const p = decodeCanonical<ChangePayload>(open(key, ch.payload))
      out.push({ id: ch.id, lamport: ch.lamport, author: ch.author, timestamp: ch.timestamp, prevIds: ch.prevIds, ops: p.ops, traceIds: p.traceIds ?? [] })
    }
    return out
  }

  async list(objectId: string, q: HistoryQuery = {}): Promise<{ changes: HistoryEntry[]; cursor: string | null }> {
    const asked = q.limit ?? HISTORY_LIMITS.defaultLimit
    if (!Number.isInteger(asked) || asked < 1) throw new SvcError('request.invalid_field', 'limit is a positive integer', { field: 'limit' })
    // Spec Limits: "default 50, cap 200": a larger limit is capped, not refused.
    const limit = Math.min(asked, HISTORY_LIMITS.maxLimit)
    const { list } = await this.load(objectId)
    let start = 0
    if (q.cursor !== undefined) {
      const at = list.findIndex((d) => d.id === q.cursor)
      if (at < 0) throw new SvcError('request.invalid_field', 'unknown cursor', { field: 'cursor' })
      start = at + 1
    }
    const window = q.coalesceWindowMs ?? HISTORY_LIMITS.defaultCoalesceWindowMs
    const out: HistoryEntry[] = []
    let last: Decoded | undefined
    let i = start
    for (; i < list.length && out.length <= limit; i++) {
      const d = list[i]
      const entry = toEntry(d, this.keeps)
      if (!matches(entry, d, q)) continue
      const prev = out[out.length - 1]
      if (q.coalesce && prev && last && last.author === d.author && Math.abs(last.timestamp - d.timestamp) <= window) {
        mergeInto(prev, entry)
        last = d
        continue
      }
      if (out.length === limit) break
      out.push(q.coalesce ? { ...entry, versions: [entry.version] } : entry)
      last = d
    }
    // The cursor is the last change this page consumed; the next page starts after it.
    const more = i < list.length
    return { changes: out, cursor: more && out.length ? list[i - 1].id : null }
  }

  /** Record states of an object at a version: the fold of every op in its causal past. */
  async stateAt(objectId: string, version: string, dataset?: string): Promise<Map<string, Map<string, RecordState>>> {
    const { byId } = await this.load(objectId)
    if (!byId.has(version)) throw new SvcError('history.version_not_found', 'no such version of this object', { version })
    return this.fold(this.past(byId, [version]), dataset)
  }

  async view(objectId: string, version: string, dataset?: string): Promise<Record<string, Record<string, Json>>> {
    const states = await this.stateAt(objectId, version, dataset)
    let n = 0
    const out: Record<string, Record<string, Json>> = {}
    for (const [ds, recs] of states) {
      for (const [id, st] of recs) {
        if (st.deleted || st.value === undefined) continue
        if (++n > HISTORY_LIMITS.maxViewRecords) {
          throw new SvcError('history.view_too_large', 'this version holds too many records to show at once; filter by dataset', { limit: HISTORY_LIMITS.maxViewRecords })
        }
        ;(out[ds] ??= {})[id] = st.value
      }
    }
    return out
  }

  async recordAt(objectId: string, version: string, dataset: string, recordId: string): Promise<{ exists: boolean; deleted?: boolean; record?: Json }> {
    const st = (await this.stateAt(objectId, version, dataset)).get(dataset)?.get(recordId)
    if (!st) return { exists: false }
    // A tombstone's full form is its deletion instant (spec "Object row": `_deletedAt` when present).
    if (st.deleted) return { exists: true, deleted: true, record: { _deletedAt: instant(st.deleted.t) } }
    return st.value === undefined ? { exists: false } : { exists: true, deleted: false, record: st.value }
  }

  /**
   * What a version changed: records it touched, before (at `base`, default its parents) and
   * after. `recordIds` narrows to some records.
   */
  async diff(objectId: string, version: string, opts: { base?: string; dataset?: string; recordIds?: string[] } = {}) {
    const { byId } = await this.load(objectId)
    const v = byId.get(version)
    if (!v) throw new SvcError('history.version_not_found', 'no such version of this object', { version })
    if (opts.base !== undefined && !byId.has(opts.base)) throw new SvcError('history.version_not_found', 'no such base version', { version: opts.base })
    const after = this.fold(this.past(byId, [version]), opts.dataset)
    const beforeIds = opts.base !== undefined ? this.past(byId, [opts.base]) : this.past(byId, v.prevIds)
    const before = this.fold(beforeIds, opts.dataset)
    const touched = new Set<string>()
    if (opts.base === undefined) {
      for (const op of v.ops) if (op.op !== 'deleteObject') touched.add(`${op.ds}\u0000${resolveId(op.id, v.id)}`)
    } else {
      for (const m of [before, after]) for (const [ds, recs] of m) for (const id of recs.keys()) touched.add(`${ds}\u0000${id}`)
    }
    const datasets: Record<string, Array<{ id: string; before: Json | null; after: Json | null }>> = {}
    for (const key of [...touched].sort()) {
      const [ds, id] = key.split('\u0000')
      if (opts.dataset !== undefined && ds !== opts.dataset) continue
      if (opts.recordIds && !opts.recordIds.includes(id)) continue
      const b = valueOf(before.get(ds)?.get(id))
      const a = valueOf(after.get(ds)?.get(id))
      if (opts.base !== undefined && JSON.stringify(a) === JSON.stringify(b)) continue
      ;(datasets[ds] ??= []).push({ id, before: b, after: a })
    }
    return { base: opts.base ?? null, version, datasets }
  }

  private past(byId: Map<string, Decoded>, heads: readonly string[]): Decoded[] {
    const seen = new Set<string>()
    const stack = [...heads]
    const out: Decoded[] = []
    while (stack.length) {
      const id = stack.pop()!
      if (seen.has(id)) continue
      seen.add(id)
      const d = byId.get(id)
      if (!d) continue
      out.push(d)
      stack.push(...d.prevIds)
    }
    return out
  }

  private fold(changes: Decoded[], dataset?: string) {
    const states = new Map<string, Map<string, RecordState>>()
    const ordered = [...changes].sort((a, b) => a.lamport - b.lamport || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    for (const d of ordered) {
      for (let i = 0; i < d.ops.length; i++) {
        const op = d.ops[i]
        if (op.op === 'deleteObject') {
          states.clear()
          break
        }
        if (dataset !== undefined && op.ds !== dataset) continue
        if (!this.keeps(op.ds)) continue
        const id = resolveId(op.id, d.id)
        let recs = states.get(op.ds)
        if (!recs) {
          recs = new Map()
          states.set(op.ds, recs)
        }
        const info = { l: d.lamport, c: d.id, i, a: d.author, t: d.timestamp }
        const mop = mergeOpOf(op)
        const rule = this.policy.writeRule?.(op.ds)
        recs.set(id, applyToRecord(recs.get(id), info, mop, this.policy.pinnedPaths(op.ds), rule ? { rule, recordId: id } : undefined).state)
      }
    }
    return states
  }
}

/** Newest first in DAG order: descending (lamport, id), the reverse of the merge order. */
function newestFirst(a: Decoded, b: Decoded): number {
  return b.lamport - a.lamport || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
}

const resolveId = (id: string, changeId: string) => (id === CHANGE_DERIVED_ID ? propertyIdSync(changeId) : id)
const valueOf = (st: RecordState | undefined): Json | null => (st && !st.deleted && st.value !== undefined ? st.value : null)

function toEntry(d: Decoded, keeps: (ds: string) => boolean): HistoryEntry {
  const datasets = new Set<string>()
  const recordIds: Array<{ dataset: string; id: string }> = []
  const seen = new Set<string>()
  for (const op of d.ops) {
    if (op.op === 'deleteObject') continue
    if (!keeps(op.ds)) continue
    datasets.add(op.ds)
    const id = resolveId(op.id, d.id)
    const k = `${op.ds}\u0000${id}`
    if (!seen.has(k)) {
      seen.add(k)
      recordIds.push({ dataset: op.ds, id })
    }
  }
  return {
    version: d.id,
    author: d.author,
    timestamp: instant(d.timestamp),
    lamport: d.lamport,
    parents: d.prevIds,
    datasets: [...datasets].sort(),
    recordIds,
    traceIds: d.traceIds,
    opCount: d.ops.length,
  }
}

function matches(e: HistoryEntry, d: Decoded, q: HistoryQuery): boolean {
  // A change that only touched history-less datasets is not listed.
  if (e.opCount > 0 && e.recordIds.length === 0 && !d.ops.some((o) => o.op === 'deleteObject')) return false
  if (q.dataset !== undefined && !e.datasets.includes(q.dataset)) return false
  if (q.recordId !== undefined && !e.recordIds.some((r) => r.id === q.recordId && (q.dataset === undefined || r.dataset === q.dataset))) return false
  if (q.traceId !== undefined && !e.traceIds.includes(q.traceId)) return false
  if (q.author !== undefined && e.author !== q.author) return false
  return true
}

function mergeInto(into: HistoryEntry, e: HistoryEntry) {
  into.versions = [...(into.versions ?? [into.version]), e.version]
  into.datasets = [...new Set([...into.datasets, ...e.datasets])].sort()
  for (const r of e.recordIds) if (!into.recordIds.some((x) => x.dataset === r.dataset && x.id === r.id)) into.recordIds.push(r)
  into.traceIds = [...new Set([...into.traceIds, ...e.traceIds])]
  into.opCount += e.opCount
}
