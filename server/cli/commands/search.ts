import { call, parseClientArgs } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc } from './args.ts'

const USAGE = `usage: svc search SPACE QUERY... [--mode hybrid|fts|vector] [--scope SLUG ...] [--limit N] [--require WORD ...] [--exclude WORD ...]
  words of QUERY may be separate arguments; prints {hits, mode, vectorStatus}
${COMMON_HELP}`

/** `svc search <space> <query>`: `POST {S}/search` (docs/search.md). */
export const searchCommand: Command = {
  name: 'search',
  summary: "search a space's local index (full-text, vector or hybrid)",
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      {
        mode: { type: 'string' },
        scope: { type: 'string', multiple: true },
        limit: { type: 'string' },
        require: { type: 'string', multiple: true },
        exclude: { type: 'string', multiple: true },
      },
      io,
      USAGE,
    )
    if (positionals.length < 2) throw new UsageError(USAGE)
    const [space, ...words] = positionals
    let limit: number | undefined
    if (values.limit !== undefined) {
      limit = Number(values.limit)
      if (!Number.isSafeInteger(limit)) throw new UsageError(`--limit takes an integer\n${USAGE}`)
    }
    const body = {
      query: words.join(' '),
      ...(values.mode !== undefined ? { mode: values.mode } : {}),
      ...(values.scope !== undefined ? { scopes: values.scope } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(values.require !== undefined ? { require: values.require } : {}),
      ...(values.exclude !== undefined ? { exclude: values.exclude } : {}),
    }
    return call(ctx, 'POST', `/v1/spaces/${enc(space)}/search`, { body })
  },
}
