import { parseArgs, type ParseArgsConfig } from 'node:util'
import { EXIT, UsageError, type CliIO } from './io.ts'

export const DEFAULT_URL = 'http://127.0.0.1:7001'

/** Options every client command takes. */
export const CLIENT_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
} as const satisfies ParseArgsConfig['options']

export interface ClientContext {
  url: string
  /** `X-Svc-Control-Token` for managed servers (`--token` or SVC_CONTROL_TOKEN). */
  token?: string
  io: CliIO
}

/** Parses a command's arguments (its own options plus --url and --token). */
export function parseClientArgs<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, io: CliIO, usage: string) {
  let parsed
  try {
    parsed = parseArgs({ args, options: { ...CLIENT_OPTIONS, ...options }, allowPositionals: true, strict: true })
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${usage}`)
  }
  const values = parsed.values as Record<string, string | boolean | undefined>
  const url = (values.url as string | undefined) ?? io.env.SVC_URL ?? DEFAULT_URL
  const token = (values.token as string | undefined) ?? io.env.SVC_CONTROL_TOKEN
  const ctx: ClientContext = { url: url.replace(/\/+$/, ''), io, ...(token ? { token } : {}) }
  return { ctx, values, positionals: parsed.positionals }
}

export interface CallOptions {
  body?: unknown
  /** Send the control token (routes that take it). */
  control?: boolean
}

/**
 * One API call. Prints a JSON response body to stdout and an error envelope to stderr, and
 * returns the exit code: 0 ok, 1 4xx, 2 5xx or a malformed reply, 3 unreachable.
 */
export async function call(ctx: ClientContext, method: string, path: string, opts: CallOptions = {}): Promise<number> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  if (opts.control && ctx.token) headers['x-svc-control-token'] = ctx.token
  let res: Response
  try {
    res = await fetch(ctx.url + path, {
      method,
      headers,
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    })
  } catch {
    ctx.io.stderr.write(`svc: cannot reach ${ctx.url}\n`)
    return EXIT.unreachable
  }
  const text = await res.text()
  let body: unknown
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    ctx.io.stderr.write(`svc: ${res.status} with a body that is not JSON\n`)
    return EXIT.server
  }
  if (res.ok) {
    if (body !== undefined) ctx.io.stdout.write(JSON.stringify(body, null, 2) + '\n')
    return EXIT.ok
  }
  const err = (body as { error?: { code?: string; message?: string } } | undefined)?.error
  ctx.io.stderr.write(`svc: ${res.status} ${err?.code ?? 'error'}: ${err?.message ?? res.statusText}\n`)
  return res.status >= 500 ? EXIT.server : EXIT.user
}
