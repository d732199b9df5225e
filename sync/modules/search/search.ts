import { SvcError } from '../../core/errors.ts'
import { parseDocKey, scopeOfKey } from './doc-key.ts'
import type { FtsIndex } from './fts-index.ts'
import { EmbedderUnavailable } from './embedder.ts'
import { SEARCH_LIMITS } from './limits.ts'
import { reciprocalRankFusion } from './rrf.ts'
import type { SearchIndex } from './service.ts'
import { queryTerms, snippet, type Snippet } from './text.ts'
import type { VectorStatus } from './vector-indexer.ts'

export type SearchMode = 'hybrid' | 'fts' | 'vector'
const MODES: readonly string[] = ['hybrid', 'fts', 'vector']

/** `POST {S}/search` body (spec core.md "Spaces"); `require`/`exclude` are words (our reading). */
export interface SearchRequest {
  query: string
  scopes?: string[]
  limit?: number
  mode?: string
  /** Words every hit's document contains as well. */
  require?: string[]
  /** Words no hit's document contains. */
  exclude?: string[]
}

/**
 * One hit: a document of the index. `objectId` always; `recordId` and `collection` for a
 * record (an editor block, a chat message, a declared dataset's record), absent for what the
 * object row holds (name and description, property values). `score`: BM25 for fts, cosine for
 * vector, the fused reciprocal-rank score for hybrid; higher is better, comparable only within
 * one reply. `snippet`: a window of the document's text, `ranges` marking matched words.
 */
export interface SearchHit {
  objectId: string
  recordId?: string
  collection?: string
  scope: string
  score: number
  snippet: Snippet
}

export interface SearchReply {
  hits: SearchHit[]
  mode: SearchMode
  vectorStatus: VectorStatus
}

const bad = (field: string, message: string) => new SvcError('request.invalid_field', message, { field })

function checkWords(field: 'require' | 'exclude', v: unknown): string[] {
  if (v === undefined) return []
  if (!Array.isArray(v) || v.length > SEARCH_LIMITS.maxTerms || !v.every((w) => typeof w === 'string' && w.length <= 256)) {
    throw bad(field, `${field} is at most ${SEARCH_LIMITS.maxTerms} words`)
  }
  return (v as string[]).filter((w) => w.trim() !== '')
}

/** Validates a search body: the spec's codes for mode and scopes, request.invalid_field otherwise. */
export function checkRequest(body: SearchRequest): { query: string; scopes?: Set<string>; limit: number; mode: SearchMode; require: string[]; exclude: string[] } {
  const mode = body.mode ?? 'hybrid'
  if (typeof mode !== 'string' || !MODES.includes(mode)) throw new SvcError('search.bad_mode', 'mode is hybrid, fts or vector', { mode })
  let scopes: Set<string> | undefined
  if (body.scopes !== undefined) {
    if (!Array.isArray(body.scopes) || body.scopes.length > SEARCH_LIMITS.maxScopes)
      throw new SvcError('search.bad_scope', `scopes is a list of at most ${SEARCH_LIMITS.maxScopes} slugs`)
    for (const s of body.scopes)
      if (typeof s !== 'string' || !SEARCH_LIMITS.scopeRe.test(s)) throw new SvcError('search.bad_scope', 'a scope is a slug ([a-z0-9_-], 1 to 64)', { scope: s })
    // An empty list is no restriction, like an absent one.
    if (body.scopes.length > 0) scopes = new Set(body.scopes)
  }
  if (typeof body.query !== 'string') throw bad('query', 'query is a string')
  if (body.query.length > SEARCH_LIMITS.maxQueryChars) throw bad('query', `query is at most ${SEARCH_LIMITS.maxQueryChars} characters`)
  const limit = body.limit ?? SEARCH_LIMITS.defaultLimit
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > SEARCH_LIMITS.maxLimit) throw bad('limit', `limit is 1 to ${SEARCH_LIMITS.maxLimit}`)
  return { query: body.query, scopes, limit, mode: mode as SearchMode, require: checkWords('require', body.require), exclude: checkWords('exclude', body.exclude) }
}

/**
 * Runs one search. fts: minisearch (every word, the last as a prefix). vector: the query's
 * embedding against every document vector. hybrid: both lists fused by reciprocal rank; with
 * no embedder, or one that fails, it runs fts and says so in `mode`.
 */
export async function runSearch(idx: SearchIndex, body: SearchRequest): Promise<SearchReply> {
  const req = checkRequest(body)
  if (idx.state === 'disabled') throw new SvcError('index.disabled', 'indexing is turned off for this space (setting indexDisabled)')
  const vec = idx.vectors
  if (req.mode === 'vector' && !vec.embedder) throw new SvcError('index.no_embedder', 'no embedder is configured for this space (settings searchEmbedUrl, searchEmbedModel)')
  const index = await idx.searchable()
  // Turned off while this search waited for the index.
  if (!index || (idx.state as string) === 'disabled') throw new SvcError('index.disabled', 'indexing is turned off for this space (setting indexDisabled)')
  vec.retry()
  const terms = queryTerms(req.query)
  const scopes = req.scopes
  const depth = req.mode === 'fts' ? req.limit : Math.max(req.limit, SEARCH_LIMITS.fuseDepth)
  const ftsKeys = () => (terms.length === 0 ? [] : index.search(terms.join(' '), { scopes, require: req.require, exclude: req.exclude, limit: depth }))

  let ranked: Array<{ key: string; score: number }>
  let mode: SearchMode = req.mode
  if (req.mode === 'fts' || !vec.embedder || (req.mode === 'hybrid' && (vec.status === 'unavailable' || terms.length === 0))) {
    mode = 'fts'
    ranked = ftsKeys()
  } else {
    let q: Float32Array | undefined
    try {
      q = await vec.embedQuery(req.query)
    } catch (err) {
      if (!(err instanceof EmbedderUnavailable)) throw err
      if (req.mode === 'vector') throw new SvcError('index.embedder_unavailable', 'the embedder does not answer')
    }
    if (!q) {
      mode = 'fts'
      ranked = ftsKeys()
    } else {
      const allowed = wordFilter(index, req.require, req.exclude, scopes)
      const near = vec.store!.nearest(q, depth, allowed)
      ranked = req.mode === 'vector' ? near : reciprocalRankFusion([ftsKeys().map((h) => h.key), near.map((h) => h.key)])
    }
  }
  const hits: SearchHit[] = []
  for (const r of ranked) {
    if (hits.length >= req.limit) break
    const text = await idx.textOf(r.key)
    if (!text) continue
    const ref = parseDocKey(r.key)
    hits.push({
      objectId: ref.objectId,
      ...(ref.recordId !== undefined ? { recordId: ref.recordId, collection: ref.collection } : {}),
      scope: ref.scope,
      score: r.score,
      snippet: snippet(text, terms),
    })
  }
  return { hits, mode, vectorStatus: vec.status }
}

/** The scope, `require` and `exclude` rules for vector candidates (answered by the full-text index). */
function wordFilter(index: FtsIndex, require: string[], exclude: string[], scopes: ReadonlySet<string> | undefined): ((key: string) => boolean) | undefined {
  const all = (words: string[]) => new Set(index.search(words.join(' '), { limit: Number.MAX_SAFE_INTEGER }).map((h) => h.key))
  const any = (words: string[]) => {
    const out = new Set<string>()
    for (const w of words) for (const h of index.search(w, { limit: Number.MAX_SAFE_INTEGER })) out.add(h.key)
    return out
  }
  const req = require.length ? all(require) : undefined
  const exc = exclude.length ? any(exclude) : undefined
  if (!req && !exc && !scopes) return undefined
  return (k) => (!scopes || scopes.has(scopeOfKey(k))) && (!req || req.has(k)) && (!exc || !exc.has(k))
}
