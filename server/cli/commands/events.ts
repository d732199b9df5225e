import { call, parseClientArgs, type ClientContext } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { streamSse } from '../sse-stream.ts'
import { COMMON_HELP } from './args.ts'

const USAGE = `usage: svc events publish --type TYPE --scope device|account|space [--space SPACE_ID] [--target ID] [--data JSON]
       svc events watch [--scope SCOPE ...] [--space SPACE_ID ...] [--type TYPE ...] [--target ID ...]
  publish: fire one event on the bus; prints {"subscribers": N}, the local subscribers matched.
  watch: prints one JSON line per event ({type, scope, spaceId?, target?, data?, sender}) until
  the stream closes or Ctrl-C. Filters repeat: AND across options, OR within one; a type ending
  .* is a prefix. Without --space no space events arrive.
  Exit: 0 ok (Ctrl-C or a closed frame), 1 on a 4xx, 2 on a 5xx, 3 when the server is unreachable.
${COMMON_HELP}`

const OPTIONS = {
  type: { type: 'string', multiple: true },
  scope: { type: 'string', multiple: true },
  space: { type: 'string', multiple: true },
  target: { type: 'string', multiple: true },
  data: { type: 'string' },
} as const

const one = (name: string, values: string[] | undefined): string | undefined => {
  if (values && values.length > 1) throw new UsageError(`publish takes one --${name}\n${USAGE}`)
  return values?.[0]
}

/** Streams the event bus to stdout, one JSON line per event; resolves with the exit code. */
function watch(ctx: ClientContext, query: URLSearchParams, signal: AbortSignal): Promise<number> {
  return streamSse(ctx, `${ctx.url}/v1/events/subscribe${query.size ? `?${query}` : ''}`, {}, signal, (event, data) => {
    if (event === 'event') ctx.io.stdout.write(`${JSON.stringify(data)}\n`)
    else if (event === 'closed' && data?.reason !== 'server_shutdown') ctx.io.stderr.write(`svc: stream closed: ${data?.reason}\n`)
  })
}

export const eventsCommand: Command = {
  name: 'events',
  summary: 'publish an event, or watch the event bus',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseClientArgs(args, OPTIONS, io, USAGE)
    const { ctx, positionals } = parsed
    const values = parsed.values as { type?: string[]; scope?: string[]; space?: string[]; target?: string[]; data?: string }
    const [sub, ...rest] = positionals
    if (rest.length > 0 || (sub !== 'publish' && sub !== 'watch')) throw new UsageError(USAGE)
    if (sub === 'publish') {
      const body: Record<string, unknown> = {}
      const type = one('type', values.type)
      const scope = one('scope', values.scope)
      const spaceId = one('space', values.space)
      const target = one('target', values.target)
      if (type === undefined || scope === undefined) throw new UsageError(`publish needs --type and --scope\n${USAGE}`)
      Object.assign(body, { type, scope }, spaceId !== undefined ? { spaceId } : {}, target !== undefined ? { target } : {})
      if (values.data !== undefined) {
        try {
          body.data = JSON.parse(values.data)
        } catch {
          throw new UsageError(`--data must be JSON\n${USAGE}`)
        }
      }
      return call(ctx, 'POST', '/v1/events', { body })
    }
    if (values.data !== undefined) throw new UsageError(`--data is for publish\n${USAGE}`)
    const query = new URLSearchParams()
    for (const [option, param] of [
      ['scope', 'scope'],
      ['space', 'spaceId'],
      ['type', 'type'],
      ['target', 'target'],
    ] as const) {
      for (const v of values[option] ?? []) query.append(param, v)
    }
    const ac = new AbortController()
    const stop = () => ac.abort()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    try {
      return await watch(ctx, query, ac.signal)
    } finally {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
    }
  },
}
