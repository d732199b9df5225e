/**
 * One error class for every failure the engine reports to callers. `code` is the spec's
 * stable `<section>.<fault>` string; the HTTP layer maps it to a status through one table,
 * so no rule about statuses lives in the engine.
 */
export class SvcError extends Error {
  readonly code: string
  readonly details?: Record<string, unknown>

  constructor(code: string, message: string, details?: Record<string, unknown>) {
    super(message)
    this.name = 'SvcError'
    this.code = code
    if (details !== undefined) this.details = details
  }
}

export const isSvcError = (err: unknown): err is SvcError => err instanceof SvcError
