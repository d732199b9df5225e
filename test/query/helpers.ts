import { expect } from 'vitest'
import { SvcError } from '../../sync/core/errors.ts'
import type { Doc } from '../../sync/query/index.ts'

/** Runs `fn`, expects an SvcError with `code` (and `details` matching when given). */
export function expectSvcError(fn: () => unknown, code: string, details?: Record<string, unknown>): SvcError {
  let err: unknown
  try {
    fn()
  } catch (e) {
    err = e
  }
  expect(err, `expected SvcError ${code}`).toBeInstanceOf(SvcError)
  const e = err as SvcError
  expect(e.code).toBe(code)
  if (details) expect(e.details).toMatchObject(details)
  return e
}

/** A record with a `_ver.id` derived from its position, so default order is `n` order. */
export const rec = (n: number, fields: Record<string, unknown> = {}): Doc => ({
  id: `r${String(n).padStart(3, '0')}`,
  _ver: { id: String(n).padStart(12, '0') + '-c' },
  ...fields,
})

export const ids = (docs: readonly { id: string }[]) => docs.map((d) => d.id)
