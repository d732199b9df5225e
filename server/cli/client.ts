import { parseArgs, type ParseArgsConfig } from 'node:util'
import { createSvcClient, DEFAULT_BASE_URL, type SvcClient } from '../client/index.ts'
import { EXIT, UsageError, type CliIO } from './io.ts'
import { plainRequest, type PlainReply } from './plain-http.ts'
import { terminalSafe } from './table.ts'

export const DEFAULT_URL = DEFAULT_BASE_URL

/** Options every client command takes. */
export const CLIENT_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options']

export interface ClientContext {
  url: string
  /** `X-Svc-Control-Token` for managed servers (`--token` or SVC_CONTROL_TOKEN). */
  token?: string
  io: CliIO
  /** `--json`: print the API's JSON instead of a table (commands without a table always print JSON). */
  json?: boolean
}

/**
 * `--opt -value` as `--opt=-value` for options that take a value, so `--sort -core.name` is a
 * descending sort and not parseArgs' "argument is ambiguous".
 */
export function joinDashValues(args: string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === '--') {
      out.push(...args.slice(i))
      break
    }
    const next = args[i + 1]
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : undefined
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && next.startsWith('-') && next !== '--') {
      out.push(`${a}=${next}`)
      i++
    } else out.push(a)
  }
  return out
}

/** Parses a command's arguments (its own options plus --url, --token and --json). */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- O carries the option table's literal type into parseArgs' result
export function parseClientArgs<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, io: CliIO, usage: string) {
  const all = { ...CLIENT_OPTIONS, ...options }
  let parsed
  try {
    parsed = parseArgs({ args: joinDashValues(args, all), options: all, allowPositionals: true, strict: true })
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${usage}`)
  }
  const values = parsed.values as Record<string, string | boolean | undefined>
  const url = (values.url as string | undefined) ?? io.env.SVC_URL ?? DEFAULT_URL
  const token = (values.token as string | undefined) ?? io.env.SVC_CONTROL_TOKEN
  const ctx: ClientContext = { url: url.replace(/\/+$/, ''), io, ...(token ? { token } : {}), ...(values.json === true ? { json: true } : {}) }
  return { ctx, values, positionals: parsed.positionals }
}

/**
 * The positionals named in `names`, in order; a missing one is a UsageError naming it
 * (`svc md get: missing OBJECT_ID`). Extra positionals are refused too.
 */
export function need(command: string, positionals: string[], names: string[], usage: string): string[] {
  if (positionals.length < names.length) throw new UsageError(`svc ${command}: missing ${names.slice(positionals.length).join(' ')}\n${usage}`)
  if (positionals.length > names.length) throw new UsageError(`svc ${command}: unexpected argument ${positionals[names.length]}\n${usage}`)
  return positionals
}

/** The typed API client (openapi-fetch) for a context. */
export function api(ctx: ClientContext): SvcClient {
  return createSvcClient({ baseUrl: ctx.url, ...(ctx.token ? { controlToken: ctx.token } : {}) })
}

/** The message for a refused connection, with how to start a daemon. */
export function unreachable(ctx: ClientContext): number {
  ctx.io.stderr.write(
    `svc: cannot reach ${ctx.url}: is the daemon running? Start it with \`npm start -- --data DIR\` (or \`svc serve --data DIR\`), ` +
      'or point the CLI at it with --url URL or SVC_URL.\n',
  )
  return EXIT.unreachable
}

/** Writes an error envelope (or the status text) to stderr; returns the exit code of the status. */
export function reportError(ctx: ClientContext, status: number, body: unknown, statusText = ''): number {
  const err = (body as { error?: { code?: string; message?: string } } | undefined)?.error
  ctx.io.stderr.write(terminalSafe(`svc: ${status} ${err?.code ?? 'error'}: ${err?.message ?? statusText}`) + '\n')
  return status >= 500 ? EXIT.server : EXIT.user
}

/** What a typed call resolves to (openapi-fetch's result, loosened). */
export interface ApiResult<T> {
  data?: T
  error?: unknown
  response: Response
}

/**
 * Runs one typed call. On success resolves `{ok: true, data}`; otherwise reports (envelope,
 * unreachable, malformed reply) and resolves the exit code.
 */
export async function fetchApi<T>(ctx: ClientContext, run: (client: SvcClient) => Promise<ApiResult<T>>): Promise<{ ok: true; data: T } | { ok: false; code: number }> {
  let result: ApiResult<T>
  try {
    result = await run(api(ctx))
  } catch (err) {
    if (err instanceof SyntaxError) {
      ctx.io.stderr.write(`svc: a reply that is not JSON (${err.message})\n`)
      return { ok: false, code: EXIT.server }
    }
    return { ok: false, code: unreachable(ctx) }
  }
  if (!result.response.ok) return { ok: false, code: reportError(ctx, result.response.status, result.error, result.response.statusText) }
  return { ok: true, data: result.data as T }
}

/**
 * One typed call, printed: `render` makes the human form (a table); `--json`, or no `render`,
 * prints the JSON body. Returns the exit code: 0 ok, 1 4xx, 2 5xx or a malformed reply, 3
 * unreachable.
 */
export async function show<T>(ctx: ClientContext, run: (client: SvcClient) => Promise<ApiResult<T>>, render?: (data: T) => string): Promise<number> {
  const r = await fetchApi(ctx, run)
  if (!r.ok) return r.code
  if (r.data === undefined) return EXIT.ok
  // JSON escapes control characters itself; a table's cells are made safe by `table`.
  ctx.io.stdout.write(render && !ctx.json ? render(r.data) : JSON.stringify(r.data, null, 2) + '\n')
  return EXIT.ok
}

export interface CallOptions {
  body?: unknown
  /** Send the control token (routes that take it). */
  control?: boolean
}

/**
 * One API call by method and literal path (already encoded, query string included). Prints a
 * JSON response body to stdout and an error envelope to stderr, and returns the exit code: 0
 * ok, 1 4xx, 2 5xx or a malformed reply, 3 unreachable. The request is the one the typed
 * client would send for the route (`accept` JSON, a JSON body, the control token when asked).
 */
export async function call(ctx: ClientContext, method: string, path: string, opts: CallOptions = {}): Promise<number> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (opts.control && ctx.token) headers['x-svc-control-token'] = ctx.token
  let reply: PlainReply
  try {
    reply = await plainRequest(`${ctx.url}${path}`, method.toUpperCase(), headers, opts.body === undefined ? undefined : JSON.stringify(opts.body))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== undefined) return unreachable(ctx)
    ctx.io.stderr.write(`svc: ${(err as Error).message}\n`)
    return EXIT.server
  }
  let body: unknown
  if (reply.text !== '') {
    try {
      body = JSON.parse(reply.text)
    } catch {
      if (reply.status < 200 || reply.status >= 300) return reportError(ctx, reply.status, reply.text, reply.statusText)
      ctx.io.stderr.write('svc: a reply that is not JSON\n')
      return EXIT.server
    }
  }
  if (reply.status < 200 || reply.status >= 300) return reportError(ctx, reply.status, body, reply.statusText)
  if (body === undefined) return EXIT.ok
  ctx.io.stdout.write(JSON.stringify(body, null, 2) + '\n')
  return EXIT.ok
}
