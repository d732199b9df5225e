import { SEARCH_LIMITS } from './limits.ts'

/**
 * Tokens and snippets. One normalization for indexing, querying and highlighting: lower case,
 * diacritics stripped (NFD without combining marks), so `Café` finds `cafe` and the other way.
 */

const MARKS = /[\u0300-\u036f]/g
/** Word characters of any script: letters, digits (an apostrophe or dash splits words). */
const WORD = /[\p{L}\p{N}]+/gu

export function normalize(s: string): string {
  return s.normalize('NFD').replace(MARKS, '').toLowerCase()
}

/** Words of a text, as minisearch's tokenizer (normalized later by `processTerm`). */
export function tokenize(text: string): string[] {
  return text.match(WORD) ?? []
}

/** minisearch's term processing: normalized, never empty. */
export function processTerm(term: string): string | null {
  const t = normalize(term)
  return t === '' ? null : t
}

/** A highlighted piece of a document's text: `ranges` are [start, end) offsets into `text`. */
export interface Snippet {
  text: string
  ranges: Array<[number, number]>
}

/**
 * A window of the text around its first match of a term (a word starting with a query term,
 * as prefix search matched it), with every matching word in the window marked. Offsets are
 * into the window's text. No match (a vector-only hit): the text's opening.
 */
export function snippet(text: string, terms: readonly string[]): Snippet {
  const r = SEARCH_LIMITS.snippetRadius
  const words: Array<[number, number]> = []
  const wanted = terms.map(normalize).filter((t) => t !== '')
  for (const m of text.matchAll(WORD)) {
    const w = normalize(m[0])
    if (wanted.some((t) => w.startsWith(t))) words.push([m.index, m.index + m[0].length])
  }
  const first = words[0]?.[0] ?? 0
  let start = Math.max(0, first - r)
  let end = Math.min(text.length, (words[0]?.[1] ?? 0) + r)
  if (words.length === 0) end = Math.min(text.length, 2 * r)
  // Never cut a surrogate pair in two.
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start--
  if (end < text.length && isLowSurrogate(text.charCodeAt(end))) end++
  const ranges = words.filter(([a, b]) => a >= start && b <= end).map(([a, b]): [number, number] => [a - start, b - start])
  return { text: text.slice(start, end), ranges }
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff

/** Search terms of a query string (as the index tokenizes it), at most `max`. */
export function queryTerms(query: string, max: number = SEARCH_LIMITS.maxTerms): string[] {
  return tokenize(query)
    .map(normalize)
    .filter((t) => t !== '')
    .slice(0, max)
}
