/** Most ids a filter may name for a point lookup; a longer `$in` list is read as a scan. */
export const MAX_POINT_LOOKUP_IDS = 256

/**
 * The ids a filter can only match, when it names them outright: `{id: "x"}`, `{id: {$eq: "x"}}`
 * or `{id: {$in: [...]}}` (strings only, at most MAX_POINT_LOOKUP_IDS) and nothing else; else
 * undefined. A source that is not held yet can then read just those documents instead of the
 * whole collection: the answer is the same, since no other document can match.
 */
export function idsNamedBy(filter: unknown): string[] | undefined {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) return undefined
  const keys = Object.keys(filter)
  if (keys.length !== 1 || keys[0] !== 'id') return undefined
  const v = (filter as { id: unknown }).id
  if (typeof v === 'string') return [v]
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined
  const ops = Object.keys(v)
  if (ops.length !== 1) return undefined
  const arg = (v as Record<string, unknown>)[ops[0]]
  if (ops[0] === '$eq') return typeof arg === 'string' ? [arg] : undefined
  if (ops[0] !== '$in' || !Array.isArray(arg) || arg.length > MAX_POINT_LOOKUP_IDS) return undefined
  return arg.every((x): x is string => typeof x === 'string') ? [...new Set(arg)] : undefined
}
