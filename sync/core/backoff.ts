/**
 * Exponential backoff: the delay before retry number `attempt` (0 for the first) is
 * `baseMs * 2^attempt`, never more than `maxMs`. The exponent is capped so a long run of
 * failures cannot overflow to Infinity before the cap applies.
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30))
}
