import { type CompiledFilter, compileFilter } from '../filter.ts'
import { compileProjection } from '../projection.ts'
import { type CompiledSort, compileSort, type Entry, TopK } from '../sort.ts'
import { type Doc, hasOwn, isPlainObject, parsePath } from '../values.ts'
import { badPipeline, type Budget, wrapped } from './errors.ts'
import { checkFieldName, type CompiledExpr, compileExpr, readObjectPath, setPath, sizeOf, unsetPath } from './expr.ts'
import { GroupSink, GroupSpec, type GroupLimits, type Sink } from './group.ts'

/**
 * Stage definitions: each is parsed and compiled once (`compileStage`) and creates a fresh
 * {@link Sink} per run. Sinks form a push chain: streaming stages forward records as they come,
 * blocking stages (`$group`, `$sort`, `$count`) hold them until `end()`. `push` returning false
 * means "no more input wanted" (after `$limit`), which stops the scan early.
 */

export const STAGES = ['$match', '$group', '$sort', '$limit', '$skip', '$project', '$unwind', '$count'] as const
export type StageOp = (typeof STAGES)[number]

export type Rec = Record<string, unknown>

export interface RunContext extends GroupLimits {
  budget: Budget
}

export interface StageDef {
  readonly op: StageOp
  readonly index: number
  /** Holds its input until the end (`$group`, `$sort`, `$count`). */
  readonly blocking: boolean
  describe(): Record<string, unknown>
  sink(next: Sink, ctx: RunContext): Sink
}

export function compileStage(raw: unknown, index: number): StageDef {
  if (!isPlainObject(raw)) throw badPipeline('a stage must be an object with one $-operator key', index)
  const keys = Object.keys(raw)
  if (keys.length !== 1) throw badPipeline('a stage must have exactly one key', index, { keys })
  const op = keys[0]
  const arg = raw[op]
  switch (op) {
    case '$match':
      return new MatchStage(arg, index)
    case '$group':
      return new GroupStage(arg, index)
    case '$sort':
      return new SortStage(arg, index)
    case '$limit':
    case '$skip':
      return new SliceStage(op, arg, index)
    case '$project':
      return new ProjectStage(arg, index)
    case '$unwind':
      return new UnwindStage(arg, index)
    case '$count':
      return new CountStage(arg, index)
  }
  throw badPipeline(`unknown stage ${op}`, index, { op, accepted: [...STAGES] })
}

// ---------------------------------------------------------------------------------------------
// $match

export class MatchStage implements StageDef {
  readonly op = '$match'
  readonly blocking = false
  readonly filter: CompiledFilter
  constructor(
    readonly arg: unknown,
    readonly index: number,
  ) {
    if (!isPlainObject(arg)) throw badPipeline('$match takes a filter object', index, { op: this.op })
    this.filter = wrapped(index, this.op, () => compileFilter(arg))
  }
  describe() {
    return { filter: this.arg, indexable: this.filter.hints.map((h) => h.path) }
  }
  sink(next: Sink): Sink {
    return this.filter.matchesAll ? next : new MatchSink(this.filter.test, next)
  }
}

class MatchSink implements Sink {
  constructor(
    private readonly test: (d: Doc) => boolean,
    private readonly next: Sink,
  ) {}
  push(doc: Rec): boolean {
    return this.test(doc as Doc) ? this.next.push(doc) : true
  }
  end(): void {
    this.next.end()
  }
}

// ---------------------------------------------------------------------------------------------
// $group

class GroupStage implements StageDef {
  readonly op = '$group'
  readonly blocking = true
  readonly spec: GroupSpec
  constructor(
    arg: unknown,
    readonly index: number,
  ) {
    this.spec = new GroupSpec(arg, index)
  }
  describe() {
    return this.spec.describe()
  }
  sink(next: Sink, ctx: RunContext): Sink {
    return new GroupSink(this.spec, ctx, next)
  }
}

// ---------------------------------------------------------------------------------------------
// $sort

/** Estimated fixed bytes of one held sort entry, plus {@link SORT_KEY_BYTES} per key. */
export const SORT_ENTRY_BYTES = 64
export const SORT_KEY_BYTES = 16

interface AggEntry extends Entry {
  seq: number
  bytes: number
}

export class SortStage implements StageDef {
  readonly op = '$sort'
  readonly blocking = true
  readonly sort: CompiledSort
  readonly spec: string[]
  /** Most entries kept (set by the pipeline when `$skip`/`$limit` follow): a bounded heap. */
  bound = Infinity
  constructor(
    arg: unknown,
    readonly index: number,
  ) {
    let spec: string[]
    if (Array.isArray(arg)) {
      if (!arg.every((s) => typeof s === 'string')) throw badPipeline('$sort takes {path: 1 | -1} or an array of paths', index, { op: this.op })
      spec = arg
    } else if (isPlainObject(arg)) {
      spec = Object.keys(arg).map((k) => {
        const d = arg[k]
        if (d !== 1 && d !== -1) throw badPipeline('$sort directions are 1 or -1', index, { op: this.op, field: k })
        if (k.startsWith('-')) throw badPipeline('malformed sort field', index, { op: this.op, field: k })
        return d === -1 ? '-' + k : k
      })
    } else throw badPipeline('$sort takes {path: 1 | -1} or an array of paths', index, { op: this.op })
    if (spec.length === 0) throw badPipeline('$sort needs at least one field', index, { op: this.op })
    this.spec = spec
    this.sort = wrapped(index, this.op, () => compileSort(spec))
  }
  describe() {
    const d: Record<string, unknown> = { fields: this.sort.fields.map((f) => ({ path: f.path, desc: f.desc })) }
    if (this.bound !== Infinity) d.topK = this.bound
    return d
  }
  sink(next: Sink, ctx: RunContext): Sink {
    return new SortSink(this, ctx, next)
  }
}

class SortSink implements Sink {
  private readonly entries: AggEntry[] = []
  private readonly heap: TopK | undefined
  private readonly cmp: (a: AggEntry, b: AggEntry) => number
  private readonly fixed: number
  private seq = 0
  private held = 0

  constructor(
    private readonly st: SortStage,
    private readonly ctx: RunContext,
    private readonly next: Sink,
  ) {
    const compare = st.sort.compare
    // Stable: equal keys (including the `_ver.id`, `id` tie-breaks) keep their input order.
    this.cmp = (a, b) => compare(a, b) || a.seq - b.seq
    if (st.bound !== Infinity) this.heap = new TopK(st.bound, this.cmp as (a: Entry, b: Entry) => number)
    this.fixed = SORT_ENTRY_BYTES + SORT_KEY_BYTES * (st.sort.fields.length + 1)
  }

  push(doc: Rec): boolean {
    const e = this.st.sort.entry(doc as Doc) as AggEntry
    e.seq = this.seq++
    e.bytes = this.fixed + sizeOf(doc)
    const budget = this.ctx.budget
    if (this.heap) {
      const w = this.heap.worst as AggEntry | undefined
      if (this.heap.offer(e)) {
        budget.charge(e.bytes, this.st.index)
        this.held += e.bytes
        if (w) {
          budget.release(w.bytes)
          this.held -= w.bytes
        }
      }
    } else {
      budget.charge(e.bytes, this.st.index)
      this.held += e.bytes
      this.entries.push(e)
    }
    return true
  }

  end(): void {
    const list = this.heap ? (this.heap.sorted() as AggEntry[]) : this.entries.sort(this.cmp)
    for (let i = 0; i < list.length; i++) if (!this.next.push(list[i].doc)) break
    this.ctx.budget.release(this.held)
    this.held = 0
    this.next.end()
  }
}

// ---------------------------------------------------------------------------------------------
// $limit, $skip

export class SliceStage implements StageDef {
  readonly blocking = false
  readonly n: number
  constructor(
    readonly op: '$limit' | '$skip',
    arg: unknown,
    readonly index: number,
  ) {
    if (typeof arg !== 'number' || !Number.isSafeInteger(arg) || arg < 0) {
      throw badPipeline(`${op} takes a non-negative integer`, index, { op })
    }
    this.n = arg
  }
  describe() {
    return { n: this.n }
  }
  sink(next: Sink): Sink {
    return this.op === '$limit' ? new LimitSink(this.n, next) : new SkipSink(this.n, next)
  }
}

class LimitSink implements Sink {
  constructor(
    private left: number,
    private readonly next: Sink,
  ) {}
  push(doc: Rec): boolean {
    if (this.left <= 0) return false
    this.left--
    return this.next.push(doc) && this.left > 0
  }
  end(): void {
    this.next.end()
  }
}

class SkipSink implements Sink {
  constructor(
    private left: number,
    private readonly next: Sink,
  ) {}
  push(doc: Rec): boolean {
    if (this.left > 0) {
      this.left--
      return true
    }
    return this.next.push(doc)
  }
  end(): void {
    this.next.end()
  }
}

// ---------------------------------------------------------------------------------------------
// $project

interface Computed {
  path: string
  segs: string[]
  expr: CompiledExpr
}

class ProjectStage implements StageDef {
  readonly op = '$project'
  readonly blocking = false
  readonly mode: 'include' | 'exclude'
  readonly paths: string[] = []
  readonly computed: Computed[] = []
  readonly base: (d: Rec) => Rec

  constructor(
    arg: unknown,
    readonly index: number,
  ) {
    const op = this.op
    if (!isPlainObject(arg)) throw badPipeline('$project takes an object', index, { op })
    const keys = Object.keys(arg)
    if (keys.length === 0) throw badPipeline('$project needs at least one field', index, { op })
    const flags: Record<string, boolean> = {}
    let include = false
    let exclude = false
    for (const k of keys) {
      const v = arg[k]
      const segs = parsePath(k)
      if (!segs) throw badPipeline('malformed projection path', index, { op, field: k })
      if (v === 1 || v === true || v === 0 || v === false) {
        const on = v === 1 || v === true
        flags[k] = on
        if (k !== 'id' && k !== '_id') {
          if (on) include = true
          else exclude = true
        }
        continue
      }
      for (const s of segs) checkFieldName(s, { stage: index, op, field: k })
      this.computed.push({ path: k, segs, expr: compileExpr(v, { stage: index, op, field: k }) })
    }
    if (this.computed.length > 0) {
      if (exclude) throw badPipeline('$project cannot mix computed fields with exclusions', index, { op })
      include = true
      for (const c of this.computed) {
        for (const k of keys) {
          if (k !== c.path && (k.startsWith(c.path + '.') || c.path.startsWith(k + '.'))) {
            throw badPipeline(`$project path ${c.path} collides with ${k}`, index, { op, field: c.path })
          }
        }
      }
    }
    if (include && exclude) throw badPipeline('$project cannot mix inclusion and exclusion', index, { op })
    // `id` and `_id` (record and group identities) are kept unless set to 0.
    if (!include && !exclude) include = flags.id === true || flags._id === true || (flags.id !== false && flags._id !== false)
    this.mode = include ? 'include' : 'exclude'
    if (include) {
      const spec: Record<string, number> = {}
      for (const k of keys) if (flags[k] === true && k !== '_id' && k !== 'id') spec[k] = 1
      this.paths = Object.keys(spec)
      const keepId = flags.id !== false
      const keepGroupId = flags._id !== false
      if (this.paths.length === 0) {
        this.base = (d) => {
          const o: Rec = {}
          if (keepId && hasOwn(d, 'id')) o.id = d.id
          if (keepGroupId && hasOwn(d, '_id')) o._id = d._id
          return o
        }
      } else {
        if (!keepId) spec.id = 0
        if (keepGroupId) spec._id = 1
        const p = wrapped(index, op, () => compileProjection(spec))
        // eslint-disable-next-line @typescript-eslint/unbound-method -- a compiled projection's apply is a closure, not a method
        this.base = p.apply as unknown as (d: Rec) => Rec
      }
    } else {
      const spec: Record<string, number> = {}
      for (const k of keys) if (flags[k] === false) spec[k] = 0
      this.paths = Object.keys(spec)
      const p = wrapped(index, op, () => compileProjection(spec))
      // eslint-disable-next-line @typescript-eslint/unbound-method -- a compiled projection's apply is a closure, not a method
      this.base = p.apply as unknown as (d: Rec) => Rec
    }
  }

  describe() {
    return {
      mode: this.mode,
      [this.mode === 'include' ? 'include' : 'exclude']: this.paths,
      computed: this.computed.map((c) => ({ path: c.path, expr: c.expr.kind })),
    }
  }

  sink(next: Sink): Sink {
    return new ProjectSink(this.base, this.computed, next)
  }
}

class ProjectSink implements Sink {
  constructor(
    private readonly base: (d: Rec) => Rec,
    private readonly computed: Computed[],
    private readonly next: Sink,
  ) {}
  push(doc: Rec): boolean {
    let out = this.base(doc)
    const cs = this.computed
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i]
      const v = c.expr.fn(doc)
      if (v === undefined) continue
      // `out` is fresh at the top level; deeper objects may be shared, so copy along the path.
      if (c.segs.length === 1) out[c.path] = v
      else out = setPath(out, c.segs, v)
    }
    return this.next.push(out)
  }
  end(): void {
    this.next.end()
  }
}

// ---------------------------------------------------------------------------------------------
// $unwind

class UnwindStage implements StageDef {
  readonly op = '$unwind'
  readonly blocking = false
  readonly path: string
  readonly segs: string[]
  readonly preserve: boolean
  readonly indexField: string | undefined

  constructor(
    arg: unknown,
    readonly index: number,
  ) {
    const op = this.op
    let path: unknown = arg
    let preserve: unknown = false
    let indexField: unknown
    if (isPlainObject(arg)) {
      for (const k of Object.keys(arg)) {
        if (k !== 'path' && k !== 'preserveNullAndEmptyArrays' && k !== 'includeArrayIndex') {
          throw badPipeline(`unknown $unwind option ${k}`, index, { op, field: k })
        }
      }
      path = arg.path
      preserve = arg.preserveNullAndEmptyArrays ?? false
      indexField = arg.includeArrayIndex ?? undefined
    }
    if (typeof path !== 'string' || !path.startsWith('$') || path.startsWith('$$')) {
      throw badPipeline('$unwind takes a field path "$a.b" or {path, preserveNullAndEmptyArrays?}', index, { op })
    }
    const segs = parsePath(path.slice(1))
    if (!segs) throw badPipeline('malformed $unwind path', index, { op, field: path })
    if (typeof preserve !== 'boolean') throw badPipeline('preserveNullAndEmptyArrays must be a boolean', index, { op, field: 'preserveNullAndEmptyArrays' })
    if (indexField !== undefined) {
      if (typeof indexField !== 'string') throw badPipeline('includeArrayIndex must be a field name', index, { op, field: 'includeArrayIndex' })
      checkFieldName(indexField, { stage: index, op, field: 'includeArrayIndex' })
    }
    this.path = path.slice(1)
    this.segs = segs
    this.preserve = preserve
    this.indexField = indexField
  }

  describe() {
    const d: Record<string, unknown> = { path: this.path, preserveNullAndEmptyArrays: this.preserve }
    if (this.indexField) d.includeArrayIndex = this.indexField
    return d
  }

  sink(next: Sink): Sink {
    return new UnwindSink(this, next)
  }
}

class UnwindSink implements Sink {
  constructor(
    private readonly st: UnwindStage,
    private readonly next: Sink,
  ) {}
  push(doc: Rec): boolean {
    const { segs, preserve, indexField } = this.st
    const v = readObjectPath(doc, segs)
    if (Array.isArray(v)) {
      if (v.length === 0) {
        if (!preserve) return true
        const out = unsetPath(doc, segs)
        return this.next.push(indexField ? { ...out, [indexField]: null } : out)
      }
      for (let i = 0; i < v.length; i++) {
        const out = setPath(doc, segs, v[i])
        if (indexField) out[indexField] = i
        if (!this.next.push(out)) return false
      }
      return true
    }
    if ((v === undefined || v === null) && !preserve) return true
    // A non-array value is a one-element array; null/missing pass through when preserved.
    const idx = v === undefined || v === null ? null : 0
    return this.next.push(indexField ? { ...doc, [indexField]: idx } : doc)
  }
  end(): void {
    this.next.end()
  }
}

// ---------------------------------------------------------------------------------------------
// $count

class CountStage implements StageDef {
  readonly op = '$count'
  readonly blocking = true
  readonly field: string
  constructor(
    arg: unknown,
    readonly index: number,
  ) {
    if (typeof arg !== 'string') throw badPipeline('$count takes a field name', index, { op: this.op })
    checkFieldName(arg, { stage: index, op: this.op, field: arg })
    if (arg === '_id') throw badPipeline('$count field cannot be _id', index, { op: this.op, field: arg })
    this.field = arg
  }
  describe() {
    return { field: this.field }
  }
  sink(next: Sink): Sink {
    return new CountSink(this.field, next)
  }
}

class CountSink implements Sink {
  private n = 0
  constructor(
    private readonly field: string,
    private readonly next: Sink,
  ) {}
  push(): boolean {
    this.n++
    return true
  }
  end(): void {
    this.next.push({ [this.field]: this.n })
    this.next.end()
  }
}
