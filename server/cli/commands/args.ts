import { UsageError } from '../io.ts'

/** Shared argument helpers of the data commands. */

export const enc = encodeURIComponent

/** A JSON option (`--filter '{"a":1}'`), or undefined when absent. */
export function jsonOption(name: string, value: unknown, usage: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(value as string)
  } catch {
    throw new UsageError(`--${name} must be JSON\n${usage}`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`--${name} must be a JSON object\n${usage}`)
  return parsed as Record<string, unknown>
}

export function intOption(name: string, value: unknown, usage: string): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value as string)) throw new UsageError(`--${name} must be a non-negative integer\n${usage}`)
  return Number(value)
}

/** The window options every query command takes: --filter, --sort (repeatable), --limit, --offset. */
export const WINDOW_OPTIONS = {
  filter: { type: 'string' },
  sort: { type: 'string', multiple: true },
  limit: { type: 'string' },
  offset: { type: 'string' },
} as const

export function windowBody(values: Record<string, unknown>, usage: string): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  const filter = jsonOption('filter', values.filter, usage)
  if (filter) body.filter = filter
  if (Array.isArray(values.sort) && values.sort.length > 0) body.sort = values.sort
  const limit = intOption('limit', values.limit, usage)
  if (limit !== undefined) body.limit = limit
  const offset = intOption('offset', values.offset, usage)
  if (offset !== undefined) body.offset = offset
  return body
}

/** `path=value`: the value is JSON when it parses as JSON, else the literal string. */
export function assignment(arg: string, usage: string): { path: string; value: unknown } {
  const i = arg.indexOf('=')
  if (i < 0) throw new UsageError(`--set takes path=value (got ${arg})\n${usage}`)
  const raw = arg.slice(i + 1)
  let value: unknown = raw
  try {
    value = JSON.parse(raw)
  } catch {
    // a bare string
  }
  return { path: arg.slice(0, i), value }
}

export const COMMON_HELP = `  common: --url URL (default $SVC_URL or http://127.0.0.1:7001)`
