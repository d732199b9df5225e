import type { Json, JsonObject } from '../../crdt/ops.ts'
import type { Doc } from '../../space/rows.ts'
import type { ModuleContext } from '../../space/module.ts'
import { docKey } from './doc-key.ts'
import type { IndexOp } from './fts-index.ts'
import { SEARCH_LIMITS } from './limits.ts'

/**
 * What a space indexes, read from declarations (never from another module's code):
 * - object rows: `core.name` and `core.description` (scope `basic`); synced property values
 *   whose definition's `meta.index` is `props` (the default) or a named scope (`none`: not
 *   indexed);
 * - records of a collection whose dataset kind declares `search` (ModuleDataset.search: the
 *   editor's blocks, chat's messages), the kind's scope and fields;
 * - records of a declared dataset with `search: true` (its string fields) or `search: [fields]`
 *   (scope `data`).
 * `sig` changes whenever any of it does; an index built under another signature is rebuilt.
 */
export interface Catalog {
  sig: string
  /** Collection -> scope and fields (`null`: every string field). */
  collections: Map<string, { scope: string; fields: readonly string[] | null }>
  /** Type id -> its indexed synced properties. */
  props: Map<string, Array<{ propId: string; scope: string }>>
  /** Every scope an object row can hold a document in: `basic` and the properties' scopes. */
  rowScopes: ReadonlySet<string>
}

export const DATA_SCOPE = 'data'
export const BASIC_SCOPE = 'basic'
export const PROPS_SCOPE = 'props'

export async function readCatalog(ctx: ModuleContext): Promise<Catalog> {
  const collections: Catalog['collections'] = new Map()
  const props: Catalog['props'] = new Map()
  const kindSearch = new Map<string, { scope: string; fields: readonly string[] }>()
  for (const k of ctx.space.modules.allKinds()) {
    if (!k.search) continue
    kindSearch.set(k.kind, k.search)
    collections.set(k.canonicalCollection, { scope: k.search.scope, fields: k.search.fields })
  }
  for (const t of ctx.types.listTypes({ includeHidden: true })) {
    const own: Array<{ propId: string; scope: string }> = []
    for (const p of await ctx.types.listProperties(t.id)) {
      if (p.scope !== 'synced' || !(p.kind === 'string' || p.kind === 'array')) continue
      const idx = p.meta.index
      if (idx === 'none') continue
      own.push({ propId: p.id, scope: typeof idx === 'string' ? idx : PROPS_SCOPE })
    }
    if (own.length) props.set(t.id, own)
    for (const part of await ctx.types.listParts(t.id)) {
      for (const d of part.datasets) {
        const viaKind = d.module ? kindSearch.get(d.module) : undefined
        if (viaKind) collections.set(d.collection, viaKind)
        else if (d.search === true) collections.set(d.collection, { scope: DATA_SCOPE, fields: null })
        else if (Array.isArray(d.search) && d.search.length) collections.set(d.collection, { scope: DATA_SCOPE, fields: d.search })
      }
    }
  }
  return catalogOf(JSON.stringify([[...collections].sort(), [...props].sort()]), collections, props)
}

function catalogOf(sig: string, collections: Catalog['collections'], props: Catalog['props']): Catalog {
  const rowScopes = new Set([BASIC_SCOPE])
  for (const list of props.values()) for (const p of list) rowScopes.add(p.scope)
  return { sig, collections, props, rowScopes }
}

/**
 * The catalog a saved index was built under, from its signature (which holds all of it). A
 * space still loading its object rows cannot read its types yet; its saved index is answered
 * under this until the rows are in, then the catalog is read again (SearchIndex.start).
 * Undefined when the signature does not parse as one.
 */
export function catalogFromSig(sig: string): Catalog | undefined {
  try {
    const [collections, props] = JSON.parse(sig) as [Array<[string, { scope: string; fields: string[] | null }]>, Array<[string, Array<{ propId: string; scope: string }>]>]
    if (!Array.isArray(collections) || !Array.isArray(props)) return undefined
    return catalogOf(sig, new Map(collections), new Map(props))
  } catch {
    return undefined
  }
}

const cut = (s: string) => (s.length > SEARCH_LIMITS.maxDocChars ? s.slice(0, SEARCH_LIMITS.maxDocChars) : s)

/** String leaves of a value (a string, or strings in an array), joined by line breaks. */
function strings(v: Json | undefined): string {
  if (typeof v === 'string') return v
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string').join('\n')
  return ''
}

/** The documents an object row holds, by key (keys it holds no text for are absent). */
export function rowTexts(row: Doc, catalog: Catalog): Map<string, string> {
  const out = new Map<string, string>()
  const objectId = row.id
  const core = (row.core ?? {}) as JsonObject
  const basic = [strings(core.name), strings(core.description)].filter((s) => s !== '').join('\n')
  if (basic) out.set(docKey({ objectId, scope: BASIC_SCOPE }), cut(basic))
  const types = Array.isArray(core.types) ? core.types : []
  const byScope = new Map<string, string[]>()
  for (const t of types) {
    if (typeof t !== 'string') continue
    const group = row[t] as JsonObject | undefined
    if (!group || typeof group !== 'object') continue
    for (const p of catalog.props.get(t) ?? []) {
      const s = strings(group[p.propId])
      if (!s) continue
      let list = byScope.get(p.scope)
      if (!list) byScope.set(p.scope, (list = []))
      list.push(s)
    }
  }
  for (const [scope, list] of byScope) out.set(docKey({ objectId, scope }), cut(list.join('\n')))
  return out
}

/** The text of a record of an indexed collection ('' when it holds none). */
export function recordText(doc: Doc | undefined, spec: { fields: readonly string[] | null }): string {
  if (!doc) return ''
  const parts: string[] = []
  if (spec.fields) for (const f of spec.fields) parts.push(strings(doc[f]))
  else for (const [k, v] of Object.entries(doc)) if (k !== 'id' && !k.startsWith('_') && typeof v === 'string') parts.push(v)
  return cut(parts.filter((s) => s !== '').join('\n'))
}

/** Operations that bring an object's row-level documents to `texts` (drops the ones gone). */
export function rowOps(objectId: string, held: ReadonlySet<string>, texts: ReadonlyMap<string, string>): IndexOp[] {
  const ops: IndexOp[] = []
  for (const k of held) if (isRowKey(k, objectId) && !texts.has(k)) ops.push({ k })
  for (const [k, t] of texts) ops.push({ k, t })
  return ops
}

/**
 * Every row-level key an object can hold under `catalog`: what `rowOps` must clear when the
 * keys the object holds are not known (the index is not in memory, service.ts).
 */
export function rowKeysOf(objectId: string, catalog: Catalog): Set<string> {
  const out = new Set<string>()
  for (const scope of catalog.rowScopes) out.add(docKey({ objectId, scope }))
  return out
}

/** A row-level key (`<objectId>/<scope>`, no record part). */
export function isRowKey(k: string, objectId: string): boolean {
  return k.indexOf('/', objectId.length + 1) < 0
}
