import { SEARCH_LIMITS } from './limits.ts'

/**
 * Reciprocal rank fusion: a document's fused score is the sum over the lists it appears in
 * of 1 / (k + rank), rank from 1. Scores of the two lists are never compared, only ranks, so
 * BM25 and cosine need no common scale. Ties keep the order of first appearance.
 */
export function reciprocalRankFusion(lists: ReadonlyArray<readonly string[]>, k: number = SEARCH_LIMITS.rrfK): Array<{ key: string; score: number }> {
  const scores = new Map<string, number>()
  for (const list of lists) list.forEach((key, i) => scores.set(key, (scores.get(key) ?? 0) + 1 / (k + i + 1)))
  return [...scores].map(([key, score]) => ({ key, score })).sort((a, b) => b.score - a.score)
}
