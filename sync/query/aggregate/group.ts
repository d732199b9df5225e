import { cmpInRank, isPlainObject, Rank, writeKey } from '../values.ts'
import { badPipeline, type Budget, limitExceeded, MAX_GROUP_FIELDS } from './errors.ts'
import { ckey, type CompiledExpr, compileExpr, type Expr, sizeOf } from './expr.ts'

/**
 * `$group`: `{_id: expr, field: {$acc: expr}, ...}`.
 *
 * Groups are keyed by the `_id` value under deep equality (`{$date}` by instant, object key
 * order free; missing and null are one group, whose `_id` is null). Output: one record
 * `{_id, ...fields in spec order}` per group, in order of first appearance of the group in the
 * input (so the output is deterministic for a deterministic input order).
 *
 * Hot path (one call per input record, no allocation for numeric accumulators): the `_id` is
 * read by a compiled getter with its own call site (sites.ts) and a scalar key looks up a Map
 * directly (object and array keys by their canonical text); each accumulator is an updater
 * closure built at compile time, called from an unrolled call site of its own, updating
 * per-group state arrays (doubles for sums and counts).
 */

export const ACCUMULATORS = ['$sum', '$avg', '$min', '$max', '$count', '$push', '$addToSet', '$first', '$last'] as const
export type AccumulatorOp = (typeof ACCUMULATORS)[number]

// Opcodes. Numeric state (`s`) and other state (`o`) slots per accumulator are listed beside.
const SUM_CONST = 0 // none: the constant times the group's record count
const SUM = 1 // s[k]: sum
const AVG = 2 // s[k]: sum, s[k+1]: count
const COUNT = 3 // none (the group's record count)
const MIN = 4 // s[k]: bytes held; o[j]: value, o[j+1]: rank, o[j+2]: in-rank key
const MAX = 5 // same as MIN
const PUSH = 6 // o[j]: array
const ADD_TO_SET = 7 // o[j]: array, o[j+1]: Set of scalars, o[j+2]: Set of composite keys
const FIRST = 8 // s[k]: bytes held; o[j]: value
const LAST = 9 // s[k]: bytes held; o[j]: value

const OPCODE: Record<AccumulatorOp, number> = {
  $sum: SUM,
  $avg: AVG,
  $min: MIN,
  $max: MAX,
  $count: COUNT,
  $push: PUSH,
  $addToSet: ADD_TO_SET,
  $first: FIRST,
  $last: LAST,
}
const NUM_SLOTS = [0, 1, 2, 0, 1, 1, 0, 0, 1, 1]
const OBJ_SLOTS = [0, 0, 0, 0, 3, 3, 1, 3, 1, 1]

/** Estimated fixed bytes of one group: Map entry, group object, state arrays. */
export const GROUP_BYTES = 160
/** Estimated fixed bytes per accumulator in a group. */
export const ACCUMULATOR_BYTES = 16
/** Estimated bytes per accumulated array element, beside the value itself (plus a Set entry for `$addToSet`). */
export const ARRAY_SLOT_BYTES = 8
export const SET_ENTRY_BYTES = 40

interface Group {
  id: unknown
  n: number
  s: number[]
  o: unknown[]
}

export interface GroupAccumulator {
  field: string
  op: AccumulatorOp
  /** The argument as written (for explain). */
  arg: unknown
}

/** Key modes. */
const KEY_CONST = 0 // a literal _id: one group
const KEY_EXPR = 1 // _id evaluates to a value; scalars key the Map directly
const KEY_OBJECT = 2 // _id is an object of expressions: a composite key string per record

export class GroupSpec {
  readonly accumulators: GroupAccumulator[] = []
  readonly idSpec: unknown
  readonly keyMode: number
  readonly idExpr: CompiledExpr
  readonly idParts: Expr[] = []
  /** Argument of each accumulator (accumulators with equal expressions share one getter). */
  readonly fns: Expr[] = []
  readonly ops: number[] = []
  readonly consts: number[] = []
  readonly numSlot: number[] = []
  readonly objSlot: number[] = []
  readonly numTemplate: number[]
  /** One state update per accumulator (none for `$count`), built once. */
  readonly updaters: Updater[]
  readonly nObj: number

  constructor(
    arg: unknown,
    readonly stage: number,
  ) {
    const site = { stage, op: '$group', field: '_id' }
    if (!isPlainObject(arg)) throw badPipeline('$group takes an object', stage, { op: '$group' })
    if (!Object.prototype.hasOwnProperty.call(arg, '_id')) throw badPipeline('$group requires _id', stage, { op: '$group', field: '_id' })
    const keys = Object.keys(arg)
    if (keys.length - 1 > MAX_GROUP_FIELDS) {
      throw badPipeline(`$group takes at most ${MAX_GROUP_FIELDS} accumulators`, stage, { op: '$group', max: MAX_GROUP_FIELDS })
    }
    this.idSpec = arg._id
    // Getter sites (sites.ts): 0 for the _id path, 1-3 for composite parts, 4+ for arguments.
    this.idExpr = compileExpr(arg._id, site, 1, 0)
    if (this.idExpr.kind === 'literal') this.keyMode = KEY_CONST
    else if (this.idExpr.kind === 'object') {
      this.keyMode = KEY_OBJECT
      const spec = arg._id as Record<string, unknown>
      Object.keys(spec).forEach((k, i) => this.idParts.push(compileExpr(spec[k], site, 2, i < 3 ? 1 + i : -1).fn))
    } else this.keyMode = KEY_EXPR

    const texts = new Map<string, Expr>()
    let nNum = 0
    let nObj = 0
    for (const field of keys) {
      if (field === '_id') continue
      const s = { stage, op: '$group', field }
      if (field.length === 0 || field.includes('.') || field.charCodeAt(0) === 36 || field === '__proto__') {
        throw badPipeline(`invalid field name ${JSON.stringify(field)}`, stage, { op: '$group', field })
      }
      const acc = arg[field]
      const accKeys = isPlainObject(acc) ? Object.keys(acc) : []
      if (accKeys.length !== 1) {
        throw badPipeline(`$group field ${field} must be {<accumulator>: <expression>}`, stage, { op: '$group', field })
      }
      const name = accKeys[0]
      const op = (OPCODE as Record<string, number | undefined>)[name]
      if (op === undefined || !Object.prototype.hasOwnProperty.call(OPCODE, name)) {
        throw badPipeline(`unknown accumulator ${name}`, stage, { op: '$group', field, accumulator: name })
      }
      const spec = (acc as Record<string, unknown>)[name]
      this.accumulators.push({ field, op: name as AccumulatorOp, arg: spec })
      let code = op
      let fn: Expr = NONE
      let c = 0
      if (op === COUNT) {
        if (!isPlainObject(spec) || Object.keys(spec).length !== 0) {
          throw badPipeline('$count accumulator takes {}', stage, { op: '$group', field, accumulator: name })
        }
      } else {
        const e = compileExpr(spec, s, 1, 4 + texts.size)
        if (op === SUM && e.kind === 'literal') {
          code = SUM_CONST
          c = typeof e.value === 'number' ? e.value : 0
        } else {
          const known = texts.get(e.text)
          if (known) fn = known
          else texts.set(e.text, (fn = e.fn))
        }
      }
      this.ops.push(code)
      this.fns.push(fn)
      this.consts.push(c)
      this.numSlot.push(nNum)
      this.objSlot.push(nObj)
      nNum += NUM_SLOTS[code]
      nObj += OBJ_SLOTS[code]
    }
    this.updaters = buildUpdaters(this.ops, this.numSlot, this.objSlot, this.fns)
    // A double-elements template: slice() keeps the elements kind, so sums stay unboxed.
    const t = [0.5]
    t.length = 0
    for (let i = 0; i < nNum; i++) t.push(0.5)
    t.fill(0)
    this.numTemplate = t
    this.nObj = nObj
  }

  describe(): Record<string, unknown> {
    return {
      id: this.idSpec,
      key: this.keyMode === KEY_CONST ? 'constant' : this.keyMode === KEY_OBJECT ? 'composite' : 'expression',
      accumulators: this.accumulators.map((a) => ({ field: a.field, op: a.op, arg: a.arg })),
    }
  }
}

export interface Sink {
  /** Takes one record; false when the sink wants no more input. */
  push(doc: Record<string, unknown>): boolean
  /** Optional batch form of `push` over an array (saves a call per record on hot heads). */
  pushAll?(docs: readonly Record<string, unknown>[]): boolean
  /** Input is over: flush downstream. Called exactly once. */
  end(): void
}

export interface GroupLimits {
  groupLimit: number
  accumArrayLimit: number
  budget: Budget
}

const scratch: Array<number | string> = [0, 0]

export class GroupSink implements Sink {
  private readonly strings = new Map<string, Group>()
  /** Numbers, booleans and null (missing): SameValueZero keeps types apart and 0 === -0. */
  private readonly simple = new Map<unknown, Group>()
  private readonly composite = new Map<string, Group>()
  private only: Group | undefined
  private readonly groups: Group[] = []
  private held = 0

  constructor(
    private readonly g: GroupSpec,
    private readonly limits: GroupLimits,
    private readonly next: Sink,
  ) {}

  push(doc: Record<string, unknown>): boolean {
    const spec = this.g
    let grp: Group | undefined
    if (spec.keyMode === KEY_EXPR) {
      const raw = spec.idExpr.fn(doc)
      if (typeof raw === 'string') {
        // Strings get their own Map: a string-typed key takes V8's specialized lookup.
        grp = this.strings.get(raw)
        if (grp === undefined) {
          grp = this.create(raw, 0)
          this.strings.set(raw, grp)
        }
      } else if (typeof raw === 'object' && raw !== null) grp = this.compositeGroup(raw)
      else {
        const k = raw === undefined ? null : raw
        grp = this.simple.get(k)
        if (grp === undefined) {
          grp = this.create(k, 0)
          this.simple.set(k, grp)
        }
      }
    } else grp = this.otherGroup(doc)
    grp.n++
    // One call site per accumulator position (unrolled), so each sees one updater and inlines
    // it; a loop over the updaters would make its single call site polymorphic (~2x slower).
    const u = spec.updaters
    const n = u.length
    if (n > 0) {
      u[0](grp, doc, this)
      if (n > 1) {
        u[1](grp, doc, this)
        if (n > 2) {
          u[2](grp, doc, this)
          if (n > 3) {
            u[3](grp, doc, this)
            if (n > 4) {
              u[4](grp, doc, this)
              if (n > 5) {
                u[5](grp, doc, this)
                for (let i = 6; i < n; i++) u[i](grp, doc, this)
              }
            }
          }
        }
      }
    }
    return true
  }

  /** The group of an object or array `_id` value (keyed by its canonical text). */
  private compositeGroup(raw: object): Group {
    const k = ckey(raw)
    let grp = this.composite.get(k)
    if (grp === undefined) {
      grp = this.create(raw, 2 * k.length + 16)
      this.composite.set(k, grp)
    }
    return grp
  }

  /** The group for a constant `_id` or an object of expressions. */
  private otherGroup(doc: Record<string, unknown>): Group {
    const spec = this.g
    if (spec.keyMode === KEY_CONST) {
      if (this.only === undefined) this.only = this.create(spec.idExpr.value ?? null, 0)
      return this.only
    }
    const parts = spec.idParts
    let k = ''
    for (let i = 0; i < parts.length; i++) k += ckey(parts[i](doc)) + ','
    let grp = this.composite.get(k)
    if (grp === undefined) {
      grp = this.create(spec.idExpr.fn(doc), 2 * k.length + 16)
      this.composite.set(k, grp)
    }
    return grp
  }

  pushAll(docs: readonly Record<string, unknown>[]): boolean {
    for (let i = 0; i < docs.length; i++) this.push(docs[i])
    return true
  }

  private create(id: unknown, keyBytes: number): Group {
    const { groupLimit, budget } = this.limits
    const stage = this.g.stage
    if (this.groups.length >= groupLimit) throw limitExceeded('group', groupLimit, stage)
    const bytes = GROUP_BYTES + keyBytes + sizeOf(id) + ACCUMULATOR_BYTES * this.g.ops.length
    budget.charge(bytes, stage)
    this.held += bytes
    const o = this.g.nObj === 0 ? EMPTY : new Array<unknown>(this.g.nObj).fill(undefined)
    const grp: Group = { id, n: 0, s: this.g.numTemplate.slice(), o }
    this.groups.push(grp)
    return grp
  }

  private charge(bytes: number): void {
    this.limits.budget.charge(bytes, this.g.stage)
    this.held += bytes
  }

  /** The accumulators that hold values (min, max, push, addToSet, first, last). */
  other(i: number, grp: Group, x: unknown): void {
    const spec = this.g
    const j = spec.objSlot[i]
    const k = spec.numSlot[i]
    const o = grp.o
    switch (spec.ops[i]) {
      case MIN:
      case MAX: {
        writeKey(x, scratch, 0)
        const r = scratch[0] as number
        if (r === 0) return // null and missing are ignored
        if (o[j] !== undefined) {
          const cr = o[j + 1] as number
          const c = r !== cr ? r - cr : cmpInRank(r, scratch[1], o[j + 2] as number | string)
          if (spec.ops[i] === MIN ? c >= 0 : c <= 0) return
        }
        const bytes = sizeOf(x)
        this.charge(bytes - grp.s[k])
        grp.s[k] = bytes
        o[j] = x
        o[j + 1] = r
        o[j + 2] = scratch[1]
        return
      }
      case FIRST: {
        if (grp.n !== 1) return
        const v = x === undefined ? null : x
        const bytes = sizeOf(v)
        this.charge(bytes)
        grp.s[k] = bytes
        o[j] = v
        return
      }
      case LAST: {
        const v = x === undefined ? null : x
        const bytes = sizeOf(v)
        if (bytes !== grp.s[k]) {
          this.charge(bytes - grp.s[k])
          grp.s[k] = bytes
        }
        o[j] = v
        return
      }
      case PUSH: {
        if (x === undefined) return
        let arr = o[j] as unknown[] | undefined
        if (arr === undefined) o[j] = arr = []
        this.addElement(i, arr, x, 0)
        return
      }
      case ADD_TO_SET: {
        if (x === undefined) return
        let arr = o[j] as unknown[] | undefined
        if (arr === undefined) {
          o[j] = arr = []
          o[j + 1] = new Set<unknown>()
        }
        if (typeof x === 'object' && x !== null) {
          let set = o[j + 2] as Set<string> | undefined
          if (set === undefined) o[j + 2] = set = new Set<string>()
          const key = ckey(x)
          if (set.has(key)) return
          this.addElement(i, arr, x, SET_ENTRY_BYTES + 2 * key.length)
          set.add(key)
        } else {
          const set = o[j + 1] as Set<unknown>
          if (set.has(x)) return
          this.addElement(i, arr, x, SET_ENTRY_BYTES)
          set.add(x)
        }
        return
      }
    }
  }

  private addElement(i: number, arr: unknown[], x: unknown, extra: number): void {
    const max = this.limits.accumArrayLimit
    if (arr.length >= max) {
      throw limitExceeded('accumArray', max, this.g.stage, { field: this.g.accumulators[i].field, accumulator: this.g.accumulators[i].op })
    }
    this.charge(ARRAY_SLOT_BYTES + extra + sizeOf(x))
    arr.push(x)
  }

  end(): void {
    const spec = this.g
    const accs = spec.accumulators
    const n = accs.length
    for (const grp of this.groups) {
      const out: Record<string, unknown> = { _id: grp.id }
      const s = grp.s
      const o = grp.o
      for (let i = 0; i < n; i++) {
        const k = spec.numSlot[i]
        const j = spec.objSlot[i]
        let v: unknown
        switch (spec.ops[i]) {
          case SUM_CONST:
            v = spec.consts[i] * grp.n
            break
          case SUM:
            v = s[k]
            break
          case AVG:
            v = s[k + 1] === 0 ? null : s[k] / s[k + 1]
            break
          case COUNT:
            v = grp.n
            break
          case MIN:
          case MAX:
          case FIRST:
          case LAST:
            v = o[j] === undefined ? null : o[j]
            break
          default:
            v = o[j] === undefined ? [] : o[j]
        }
        out[accs[i].field] = v
      }
      if (!this.next.push(out)) break
    }
    this.limits.budget.release(this.held)
    this.held = 0
    this.next.end()
  }
}

const EMPTY: unknown[] = []
const NONE: Expr = () => undefined

type Updater = (g: Group, doc: unknown, sink: GroupSink) => void

/**
 * The state updates of a `$group`, created once per compiled stage (never per record).
 * `$sum` of a constant and `$count` need none (computed from the group's record count at the
 * end). `$sum` / `$avg` sharing one argument share one updater, which reads the argument once;
 * the numeric updaters are small enough to inline at their call site. The others go through
 * `GroupSink.other` (budget and limit checks), one per accumulator.
 */
function buildUpdaters(ops: readonly number[], slots: readonly number[], objSlots: readonly number[], fns: readonly Expr[]): Updater[] {
  type Plan = { fn: Expr; sums: number[]; avgs: number[] } | { other: number }
  const plans: Plan[] = []
  const numeric = new Map<Expr, { fn: Expr; sums: number[]; avgs: number[] }>()
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]
    if (op === SUM || op === AVG) {
      let n = numeric.get(fns[i])
      if (!n) {
        numeric.set(fns[i], (n = { fn: fns[i], sums: [], avgs: [] }))
        plans.push(n)
      }
      ;(op === SUM ? n.sums : n.avgs).push(slots[i])
    } else if (op !== SUM_CONST && op !== COUNT) plans.push({ other: i })
  }
  return plans.map((p): Updater => {
    if ('other' in p) {
      const i = p.other
      const fn = fns[i]
      const j = objSlots[i]
      // $min / $max: a number against a held number is decided inline (no size change, no
      // allocation unless it replaces); everything else takes the general path.
      if (ops[i] === MIN) {
        return (g, doc, sink) => {
          const x = fn(doc)
          const o = g.o
          if (typeof x === 'number' && o[j + 1] === Rank.Num) {
            if (x < (o[j] as number)) o[j] = o[j + 2] = x
          } else sink.other(i, g, x)
        }
      }
      if (ops[i] === MAX) {
        return (g, doc, sink) => {
          const x = fn(doc)
          const o = g.o
          if (typeof x === 'number' && o[j + 1] === Rank.Num) {
            if (x > (o[j] as number)) o[j] = o[j + 2] = x
          } else sink.other(i, g, x)
        }
      }
      return (g, doc, sink) => sink.other(i, g, fn(doc))
    }
    return numericUpdater(p.fn, p.sums, p.avgs)
  })
}

/** `$sum` (slots `sums`) and `$avg` (slot pairs `avgs`: sum, count) over one argument. */
function numericUpdater(fn: Expr, sums: number[], avgs: number[]): Updater {
  if (sums.length === 1 && avgs.length === 0) {
    const k = sums[0]
    return (g, doc) => {
      const x = fn(doc)
      if (typeof x === 'number') g.s[k] += x
    }
  }
  if (sums.length === 0 && avgs.length === 1) {
    const k = avgs[0]
    return (g, doc) => {
      const x = fn(doc)
      if (typeof x === 'number') {
        const s = g.s
        s[k] += x
        s[k + 1]++
      }
    }
  }
  if (sums.length === 1 && avgs.length === 1) {
    const k = sums[0]
    const m = avgs[0]
    return (g, doc) => {
      const x = fn(doc)
      if (typeof x === 'number') {
        const s = g.s
        s[k] += x
        s[m] += x
        s[m + 1]++
      }
    }
  }
  return (g, doc) => {
    const x = fn(doc)
    if (typeof x !== 'number') return
    const s = g.s
    for (let j = 0; j < sums.length; j++) s[sums[j]] += x
    for (let j = 0; j < avgs.length; j++) {
      const k = avgs[j]
      s[k] += x
      s[k + 1]++
    }
  }
}
