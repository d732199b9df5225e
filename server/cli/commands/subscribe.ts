import { need, parseClientArgs, type ClientContext } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc, intOption, WINDOW_OPTIONS, windowBody } from './args.ts'
import { streamSse } from '../sse-stream.ts'
import { loadSchema, resolveFilter, resolvePath } from '../xkeys.ts'

const USAGE = `usage: svc subscribe SPACE [--object OBJECT --dataset DATASET] [--filter JSON] [--sort FIELD ...] [--limit N]
                     [--mailbox N] [--drift PERCENT] [--frames N]
  without --object: the objects of the space; with it: one object's dataset.
  Prints one JSON line per frame ({"event": ..., "data": ...}) until the stream closes, Ctrl-C,
  or --frames N frames (ready and snapshot count) have been printed. Paths may use xKeys.
  Exit: 0 on Ctrl-C or a closed frame, 1 on a 4xx, 2 on a 5xx, 3 when the server is unreachable
  or the connection drops without a closed frame.
${COMMON_HELP}`

/**
 * Streams one windowed subscription to stdout, one JSON line per frame. Resolves with the exit
 * code when the stream ends or `signal` aborts (exit 0).
 */
export function streamFrames(ctx: ClientContext, path: string, body: unknown, signal: AbortSignal, onFrame?: () => void): Promise<number> {
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
  return streamSse(ctx, ctx.url + path, init, signal, (event, data) => {
    ctx.io.stdout.write(`${JSON.stringify({ event, data })}\n`)
    onFrame?.()
  })
}

export const subscribeCommand: Command = {
  name: 'subscribe',
  summary: 'print the frames of a live query until Ctrl-C',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      { object: { type: 'string' }, dataset: { type: 'string' }, frames: { type: 'string' }, mailbox: { type: 'string' }, drift: { type: 'string' }, ...WINDOW_OPTIONS },
      io,
      USAGE,
    )
    need('subscribe', positionals, ['SPACE_ID'], USAGE)
    if ((values.object === undefined) !== (values.dataset === undefined)) throw new UsageError(`--object and --dataset go together\n${USAGE}`)
    const body: Record<string, unknown> = windowBody(values, USAGE)
    const frames = intOption('frames', values.frames, USAGE)
    if (values.object === undefined && (body.filter !== undefined || body.sort !== undefined)) {
      // Object rows: xKey paths (task.done) resolve against the space's types.
      const schema = await loadSchema(ctx, positionals[0])
      if (typeof schema === 'number') return schema
      if (body.filter !== undefined) body.filter = resolveFilter(schema, body.filter as Record<string, unknown>)
      if (body.sort !== undefined) body.sort = (body.sort as string[]).map((p) => resolvePath(schema, p))
    }
    const mailbox = intOption('mailbox', values.mailbox, USAGE)
    if (mailbox !== undefined) body.mailboxCapacity = mailbox
    if (values.drift !== undefined) {
      const drift = Number(values.drift)
      if (!Number.isFinite(drift)) throw new UsageError(`--drift must be a number\n${USAGE}`)
      body.driftBudgetPercent = drift
    }
    const space = enc(positionals[0])
    let path = `/v1/spaces/${space}/objects/query/subscribe`
    if (values.object !== undefined) {
      path = `/v1/spaces/${space}/query/subscribe`
      body.objectId = values.object
      body.dataset = values.dataset
    }
    const ac = new AbortController()
    const stop = () => ac.abort()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    try {
      let seen = 0
      return await streamFrames(ctx, path, body, ac.signal, () => {
        if (frames !== undefined && ++seen >= frames) ac.abort()
      })
    } finally {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
    }
  },
}
