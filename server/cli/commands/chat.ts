import { bundleRootId } from '../../../sync/space/bundles/model.ts'
import { call, parseClientArgs } from '../client.ts'
import { readAll, stripNewline, UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc, intOption } from './args.ts'
import { streamFrames } from './subscribe.ts'

const USAGE = `usage: svc chat send SPACE_ID [TEXT] [--reply MSG_ID] [--attach ID=svc://f/SPACE/FILE[,TYPE]]... [--chat OBJECT_ID]
       svc chat list SPACE_ID [--limit N] [--before VER_ID] [--chat OBJECT_ID]
       svc chat watch SPACE_ID [--limit N] [--chat OBJECT_ID]
  send: TEXT, or stdin when TEXT is absent and nothing is attached; prints the write result
        (recordIds[0] is the message id).
  list: the newest messages first (default 50); --before pages back from a _ver.id.
  watch: a live window of the newest messages (default 50), one JSON line per frame until Ctrl-C.
  --chat defaults to the space's general chat (POST /v1/catalog/general-chat/setup installs it).
${COMMON_HELP}`

const SUBCOMMANDS = new Set(['send', 'list', 'watch'])
const GENERAL_CHAT = 'system:general-chat/v1'
const DEFAULT_LIMIT = 50

/** `ID=LINK` or `ID=LINK,TYPE` (type defaults to link). */
function attachment(arg: string): [string, { type: string; link: string }] {
  const eq = arg.indexOf('=')
  if (eq <= 0) throw new UsageError(`--attach takes ID=svc://f/SPACE/FILE[,TYPE] (got ${arg})\n${USAGE}`)
  const [link, type = 'link'] = arg.slice(eq + 1).split(',')
  return [arg.slice(0, eq), { type, link }]
}

export const chatCommand: Command = {
  name: 'chat',
  summary: 'send, list and watch the messages of a chat',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      { chat: { type: 'string' }, reply: { type: 'string' }, attach: { type: 'string', multiple: true }, limit: { type: 'string' }, before: { type: 'string' } },
      io,
      USAGE,
    )
    const [sub, spaceId, ...rest] = positionals
    if (sub === undefined || !SUBCOMMANDS.has(sub))
      throw new UsageError(`svc chat: ${sub === undefined ? 'missing a subcommand' : `unknown subcommand ${sub}`} (send, list, watch)\n${USAGE}`)
    if (spaceId === undefined) throw new UsageError(`svc chat ${sub}: missing SPACE_ID\n${USAGE}`)
    // The general chat's root id is a pure function of the space: no lookup needed.
    const chat = (values.chat as string | undefined) ?? bundleRootId(spaceId, GENERAL_CHAT)
    const S = `/v1/spaces/${enc(spaceId)}`
    const attachments = (values.attach as string[] | undefined) ?? []
    if (sub !== 'send' && (values.reply !== undefined || attachments.length > 0)) throw new UsageError(USAGE)
    if (sub === 'send' && (values.limit !== undefined || values.before !== undefined)) throw new UsageError(USAGE)
    if (sub === 'watch' && values.before !== undefined) throw new UsageError(USAGE)
    const limit = intOption('limit', values.limit, USAGE) ?? DEFAULT_LIMIT
    switch (sub) {
      case 'send': {
        if (rest.length > 1) break
        const body: Record<string, unknown> = {}
        const text = rest[0] ?? (attachments.length === 0 ? stripNewline(await readAll(io.stdin)) : undefined)
        if (text !== undefined) body.text = text
        if (values.reply !== undefined) body.replyToMessageId = values.reply
        if (attachments.length > 0) body.attachments = Object.fromEntries(attachments.map(attachment))
        return call(ctx, 'POST', `${S}/objects/${enc(chat)}/chat/messages`, { body })
      }
      case 'list': {
        if (rest.length > 0) break
        const body: Record<string, unknown> = { objectId: chat, dataset: 'chat_messages', sort: ['-_ver.id'], limit }
        if (values.before !== undefined) body.filter = { '_ver.id': { $lt: values.before } }
        return call(ctx, 'POST', `${S}/query`, { body })
      }
      case 'watch': {
        if (rest.length > 0) break
        const ac = new AbortController()
        const stop = () => ac.abort()
        process.once('SIGINT', stop)
        process.once('SIGTERM', stop)
        try {
          return await streamFrames(ctx, `${S}/query/subscribe`, { objectId: chat, dataset: 'chat_messages', sort: ['-_ver.id'], limit }, ac.signal)
        } finally {
          process.off('SIGINT', stop)
          process.off('SIGTERM', stop)
        }
      }
    }
    throw new UsageError(USAGE)
  },
}
