import { SvcError } from '../../core/errors.ts'
import { isDateWrapper, parseInstant, type FilterDoc } from '../../query/index.ts'
import { isBuiltinType } from './builtins.ts'
import type { PropertyDef, TypeInfo } from './model.ts'

/**
 * Object queries the way a user writes them (issue 39 item 5), applied to the body of
 * `{S}/objects/query`, its `/subscribe` and the `$match` stages of `{S}/objects/aggregate`
 * before the query engine compiles them (the engine itself stays schema-free):
 *
 * - `core.types` filter values may name a type by xKey (`"task"`) as well as by id; a value that
 *   is neither is 400 `filter.invalid` (it could only ever match nothing);
 * - a string compared with a datetime field (`createdAt`, `modifiedAt`, a `datetime` property at
 *   `<typeId>.<propId>`) is taken as the `{$date}` it means when it is ISO 8601, and is 400
 *   `filter.invalid` otherwise (a bare string never equals a stored instant);
 * - a sort key no row can have is 400 `request.invalid_field` naming what was meant when it can
 *   tell (`task.priority` -> `<typeId>.<propId>`);
 * - rows of hidden types (the space index, type definitions, bundle roots such as the agents
 *   anchor and the general chat, the hidden built-ins) are left out unless the filter names
 *   `core.types` or `id`, as `GET {S}/types` leaves hidden types out without `includeHidden`.
 */
export interface ObjectQueryContext {
  types: TypeInfo[]
  properties(typeId: string): Promise<PropertyDef[]>
}

/** Row fields every object has (sortable, filterable as written). */
const ROW_FIELDS = new Set(['id', 'author', 'spaceId', 'createdAt', 'modifiedAt', 'modifiedBy', '_ver.id'])
const DATE_FIELDS = new Set(['createdAt', 'modifiedAt'])
/** Groups of system rows that are not types. */
const OTHER_GROUPS = new Set(['bundle', '_ver'])
/** Built-in types whose rows are system rows though the type is listed (type definitions). */
const SYSTEM_TYPES = new Set(['type'])

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const invalid = (message: string, details: Record<string, unknown>) => new SvcError('filter.invalid', message, details)

export class ObjectQueryResolver {
  private readonly byId = new Map<string, TypeInfo>()
  private readonly byXKey = new Map<string, TypeInfo>()
  private readonly props = new Map<string, Promise<PropertyDef[]>>()

  constructor(private readonly ctx: ObjectQueryContext) {
    for (const t of ctx.types) this.byId.set(t.id, t)
    for (const t of ctx.types) if (!this.byId.has(t.xKey)) this.byXKey.set(t.xKey, t)
  }

  private propertiesOf(typeId: string): Promise<PropertyDef[]> {
    let p = this.props.get(typeId)
    if (!p) this.props.set(typeId, (p = this.ctx.properties(typeId).catch(() => [])))
    return p
  }

  /** Type ids whose rows an unfiltered query leaves out. */
  hiddenTypeIds(): string[] {
    return this.ctx.types.filter((t) => t.hidden || SYSTEM_TYPES.has(t.id)).map((t) => t.id)
  }

  /** A snapshot or subscribe body with its filter resolved, its sort checked and hidden rows left out. */
  async body<B extends { filter?: FilterDoc | null; sort?: string[] | null }>(raw: B): Promise<B> {
    const out = { ...raw }
    if (raw.sort) await this.checkSort(raw.sort)
    const filter = raw.filter ?? undefined
    const resolved = filter === undefined ? undefined : await this.filter(filter)
    out.filter = this.withoutHidden(resolved)
    return out
  }

  /** An aggregate pipeline with each `$match` resolved as a filter (no hiding: a pipeline says what it reads). */
  async pipeline(pipeline: unknown): Promise<unknown> {
    if (!Array.isArray(pipeline)) return pipeline
    const out: unknown[] = []
    for (const stage of pipeline) out.push(isObj(stage) && isObj(stage.$match) && Object.keys(stage).length === 1 ? { $match: await this.filter(stage.$match) } : stage)
    return out
  }

  private withoutHidden(filter: FilterDoc | undefined): FilterDoc | undefined {
    if (filter !== undefined && names(filter, (k) => k === 'id' || k === 'core.types')) return filter
    const hide: FilterDoc = { 'core.types': { $nin: this.hiddenTypeIds() } }
    return filter === undefined || Object.keys(filter).length === 0 ? hide : { $and: [filter, hide] }
  }

  async filter(f: FilterDoc): Promise<FilterDoc> {
    const out: FilterDoc = {}
    for (const [k, v] of Object.entries(f)) {
      if (k === '$and' || k === '$or' || k === '$nor') out[k] = Array.isArray(v) ? await Promise.all((v as unknown[]).map((x) => (isObj(x) ? this.filter(x) : x))) : v
      else if (k.startsWith('$')) out[k] = v
      else if (k === 'core.types') out[k] = mapLeaves(v, (s) => this.typeIdOf(s))
      else if (await this.isDatePath(k)) out[k] = mapLeaves(v, (s) => dateOf(k, s))
      else out[k] = v
    }
    return out
  }

  private typeIdOf(s: string): string {
    if (this.byId.has(s)) return s
    const t = this.byXKey.get(s)
    if (t) return t.id
    throw invalid(`core.types: no type of this space has the id or xKey "${s}"`, { field: 'core.types', value: s })
  }

  private async isDatePath(path: string): Promise<boolean> {
    if (DATE_FIELDS.has(path)) return true
    const [group, prop, ...rest] = path.split('.')
    if (rest.length || prop === undefined || !this.byId.has(group)) return false
    return (await this.propertiesOf(group)).some((p) => p.id === prop && p.kind === 'datetime')
  }

  private async checkSort(sort: string[]): Promise<void> {
    for (const raw of sort) {
      if (typeof raw !== 'string') continue
      const key = raw.startsWith('-') || raw.startsWith('+') ? raw.slice(1) : raw
      const meant = await this.sortProblem(key)
      if (meant === undefined) continue
      throw new SvcError('request.invalid_field', `sort key "${key}": ${meant.message}`, { field: 'sort', key, ...(meant.didYouMean ? { didYouMean: meant.didYouMean } : {}) })
    }
  }

  /**
   * Why no row can have a value at `key`, or undefined when one can (or when this cannot tell:
   * modules lay groups of their own on rows, `chat.unreadCount`, so an unknown group passes).
   */
  private async sortProblem(key: string): Promise<{ message: string; didYouMean?: string[] } | undefined> {
    if (ROW_FIELDS.has(key) || key === 'core.types') return undefined
    const [group, ...restParts] = key.split('.')
    const rest = restParts.join('.')
    if (restParts.length === 0) {
      // A bare name: a row field it is not, so a property key written without its type.
      const candidates: string[] = []
      for (const t of this.ctx.types) for (const p of await this.propertiesOf(t.id)) if (p.xKey === key || p.id === key) candidates.push(`${t.id}.${p.id}`)
      return { message: 'not a row field; properties sort as <typeId>.<propId> (core ones as core.<name>)', ...(candidates.length ? { didYouMean: candidates } : {}) }
    }
    if (OTHER_GROUPS.has(group)) return undefined
    const type = this.byId.get(group)
    if (type) {
      if (isBuiltinType(group) && group !== 'core') return undefined
      const props = await this.propertiesOf(group)
      const prop = restParts[0]
      if (props.some((p) => p.id === prop)) return undefined
      const byKey = props.filter((p) => p.xKey === prop || p.name === prop)
      if (byKey.length) return { message: 'properties are sorted by id', didYouMean: byKey.map((p) => [group, p.id, ...restParts.slice(1)].join('.')) }
      return { message: `type ${type.xKey} has no property "${rest}"`, didYouMean: props.map((p) => `${group}.${p.id}`) }
    }
    const byXKey = this.byXKey.get(group)
    if (byXKey) {
      const props = await this.propertiesOf(byXKey.id)
      const hits = props.filter((p) => p.xKey === restParts[0] || p.id === restParts[0] || p.name === restParts[0])
      return {
        message: `rows keep values under type and property ids (${byXKey.xKey} is ${byXKey.id}); the CLI resolves TYPE.PROPERTY for you`,
        didYouMean: hits.length ? hits.map((p) => [byXKey.id, p.id, ...restParts.slice(1)].join('.')) : props.map((p) => `${byXKey.id}.${p.id}`),
      }
    }
    return undefined
  }
}

/** Whether a filter names a field (at any depth of $and/$or/$nor). */
function names(f: FilterDoc, test: (k: string) => boolean): boolean {
  for (const [k, v] of Object.entries(f)) {
    if ((k === '$and' || k === '$or' || k === '$nor') && Array.isArray(v)) {
      if (v.some((x) => isObj(x) && names(x, test))) return true
    } else if (test(k)) return true
  }
  return false
}

const LEAF_OPS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte'])
const LIST_OPS = new Set(['$in', '$nin', '$all'])

/** Applies `fn` to each string a condition compares with (plain values, arrays, comparison and list operators, `$not`). */
function mapLeaves(v: unknown, fn: (s: string) => unknown): unknown {
  if (typeof v === 'string') return fn(v)
  if (Array.isArray(v)) return (v as unknown[]).map((x) => (typeof x === 'string' ? fn(x) : x))
  if (!isObj(v) || isDateWrapper(v)) return v
  const out: Record<string, unknown> = {}
  for (const [op, arg] of Object.entries(v)) {
    if (LEAF_OPS.has(op)) out[op] = typeof arg === 'string' ? fn(arg) : arg
    else if (LIST_OPS.has(op)) out[op] = Array.isArray(arg) ? (arg as unknown[]).map((x) => (typeof x === 'string' ? fn(x) : x)) : arg
    else if (op === '$not') out[op] = mapLeaves(arg, fn)
    else out[op] = arg
  }
  return out
}

function dateOf(path: string, s: string): { $date: string } {
  if (Number.isNaN(parseInstant(s)))
    throw invalid(`${path} is a datetime: compare it with an ISO 8601 timestamp ("2026-01-02T00:00:00Z") or {$date: ...}, not "${s}"`, { field: path, value: s })
  return { $date: s }
}
