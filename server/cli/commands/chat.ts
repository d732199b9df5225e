import { bundleRootId } from '../../../sync/space/bundles/model.ts'
import { call, fetchApi, parseClientArgs, type ClientContext } from '../client.ts'
import { EXIT, readAll, stripNewline, UsageError, type Command } from '../io.ts'
import { terminalSafe } from '../table.ts'
import { COMMON_HELP, enc, intOption } from './args.ts'
import { linkMentions } from './chat-mentions.ts'
import { streamFrames } from './subscribe.ts'

const USAGE = `usage: svc chat send SPACE_ID [TEXT] [--reply MSG_ID] [--attach ID=svc://f/SPACE/FILE[,TYPE]]... [--chat OBJECT_ID]
       svc chat list SPACE_ID [--limit N] [--before VER_ID] [--chat OBJECT_ID]
       svc chat watch SPACE_ID [--limit N] [--chat OBJECT_ID]
       svc chat edit SPACE_ID MSG_ID [TEXT] [--chat OBJECT_ID]
       svc chat delete SPACE_ID MSG_ID [--chat OBJECT_ID]
       svc chat react SPACE_ID MSG_ID EMOJI [--remove] [--chat OBJECT_ID]
       svc chat read SPACE_ID (MSG_ID | --all) [--chat OBJECT_ID]
  send: TEXT, or stdin when TEXT is absent and nothing is attached; prints the write result
        (recordIds[0] is the message id).
  list: the newest messages first (default 50); --before pages back from a _ver.id.
  watch: a live window of the newest messages (default 50), one JSON line per frame until Ctrl-C.
  edit: new TEXT (or stdin) for a message of yours; delete: removes a message of yours.
  mentions: in send and edit, @name (or @"two words", or @IDENTITY) of a member becomes their
        mention, the link the web app writes: [@Name](svc://m/SPACE/IDENTITY). --no-mentions
        sends @ as typed; an @name no member has stays text (with a note on stderr).
  react: adds your EMOJI reaction to the message; --remove takes it away. Already so: no write.
  read: marks MSG_ID and every message above it read; --all marks the whole chat read.
  --chat defaults to the space's general chat (POST /v1/catalog/general-chat/setup installs it).
${COMMON_HELP}`

const SUBCOMMANDS = ['send', 'list', 'watch', 'edit', 'delete', 'react', 'read']
const GENERAL_CHAT = 'system:general-chat/v1'
const DEFAULT_LIMIT = 50

/** Options each subcommand takes (beyond --chat and the common ones). */
const ALLOWED: Record<string, readonly string[]> = {
  send: ['reply', 'attach', 'no-mentions'],
  list: ['limit', 'before'],
  watch: ['limit'],
  edit: ['no-mentions'],
  delete: [],
  react: ['remove'],
  read: ['all'],
}
const OWN = ['reply', 'attach', 'limit', 'before', 'no-mentions', 'remove', 'all']

/** `ID=LINK` or `ID=LINK,TYPE` (type defaults to link). */
function attachment(arg: string): [string, { type: string; link: string }] {
  const eq = arg.indexOf('=')
  if (eq <= 0) throw new UsageError(`--attach takes ID=svc://f/SPACE/FILE[,TYPE] (got ${arg})\n${USAGE}`)
  const [link, type = 'link'] = arg.slice(eq + 1).split(',')
  return [arg.slice(0, eq), { type, link }]
}

/** The text with `@name` mentions linked, or the exit code (the error reported) when the members cannot be read. */
async function withMentions(ctx: ClientContext, spaceId: string, text: string): Promise<string | number> {
  if (!text.includes('@')) return text
  const r = await fetchApi(ctx, (c) => c.GET('/v1/spaces/{spaceId}/members', { params: { path: { spaceId }, query: {} } }))
  if (!r.ok) return r.code
  const linked = linkMentions(text, spaceId, r.data.members)
  for (const u of linked.unknown) ctx.io.stderr.write(terminalSafe(`svc chat: no member is called @${u}; sent as text`) + '\n')
  return linked.text
}

/** Adds (or with `remove` takes away) the caller's reaction: the route toggles, so it is called only when that changes something. */
async function react(ctx: ClientContext, spaceId: string, chat: string, msgId: string, emoji: string, remove: boolean): Promise<number> {
  const me = await fetchApi(ctx, (c) => c.GET('/v1/account'))
  if (!me.ok) return me.code
  const found = await fetchApi(ctx, (c) =>
    c.POST('/v1/spaces/{spaceId}/query', {
      params: { path: { spaceId } },
      // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- a snapshot body the server's schema checks; the generated type spells every optional key
      body: { objectId: chat, dataset: 'chat_messages', filter: { id: msgId }, limit: 1 } as never,
    }),
  )
  if (!found.ok) return found.code
  const record = (found.data as { records: { reactions?: Record<string, Record<string, unknown>> }[] }).records[0]
  // An unknown message goes to the route anyway: its 404 chat.not_found is the answer.
  if (record !== undefined) {
    const has = record.reactions?.[emoji]?.[(me.data as { accountId: string }).accountId] !== undefined
    if (has !== remove) {
      ctx.io.stderr.write(terminalSafe(remove ? `svc chat: no ${emoji} of yours on ${msgId}; nothing to remove` : `svc chat: you already reacted ${emoji} to ${msgId}`) + '\n')
      return EXIT.ok
    }
  }
  return call(ctx, 'POST', `/v1/spaces/${enc(spaceId)}/objects/${enc(chat)}/chat/messages/${enc(msgId)}/reactions/${enc(emoji)}`)
}

export const chatCommand: Command = {
  name: 'chat',
  summary: 'send, list, watch, edit, delete, react to and mark read the messages of a chat',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      {
        chat: { type: 'string' },
        reply: { type: 'string' },
        attach: { type: 'string', multiple: true },
        limit: { type: 'string' },
        before: { type: 'string' },
        'no-mentions': { type: 'boolean' },
        remove: { type: 'boolean' },
        all: { type: 'boolean' },
      },
      io,
      USAGE,
    )
    const [sub, spaceId, ...rest] = positionals
    if (sub === undefined || !SUBCOMMANDS.includes(sub))
      throw new UsageError(`svc chat: ${sub === undefined ? 'missing a subcommand' : `unknown subcommand ${sub}`} (${SUBCOMMANDS.join(', ')})\n${USAGE}`)
    if (spaceId === undefined) throw new UsageError(`svc chat ${sub}: missing SPACE_ID\n${USAGE}`)
    const stray = OWN.find((o) => values[o] !== undefined && !ALLOWED[sub].includes(o))
    if (stray !== undefined) throw new UsageError(`svc chat ${sub}: --${stray} is not an option of ${sub}\n${USAGE}`)
    // The general chat's root id is a pure function of the space: no lookup needed.
    const chat = (values.chat as string | undefined) ?? bundleRootId(spaceId, GENERAL_CHAT)
    const S = `/v1/spaces/${enc(spaceId)}`
    const M = `${S}/objects/${enc(chat)}/chat/messages`
    const attachments = (values.attach as string[] | undefined) ?? []
    const limit = intOption('limit', values.limit, USAGE) ?? DEFAULT_LIMIT
    const mentions = async (text: string) => (values['no-mentions'] === true ? text : withMentions(ctx, spaceId, text))
    const msgId = () => {
      if (rest[0] === undefined) throw new UsageError(`svc chat ${sub}: missing MSG_ID\n${USAGE}`)
      return rest[0]
    }
    switch (sub) {
      case 'send': {
        if (rest.length > 1) break
        const body: Record<string, unknown> = {}
        const text = rest[0] ?? (attachments.length === 0 ? stripNewline(await readAll(io.stdin)) : undefined)
        if (text !== undefined) {
          const linked = await mentions(text)
          if (typeof linked === 'number') return linked
          body.text = linked
        }
        if (values.reply !== undefined) body.replyToMessageId = values.reply
        if (attachments.length > 0) body.attachments = Object.fromEntries(attachments.map(attachment))
        return call(ctx, 'POST', M, { body })
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
      case 'edit': {
        const id = msgId()
        if (rest.length > 2) break
        const linked = await mentions(rest[1] ?? stripNewline(await readAll(io.stdin)))
        if (typeof linked === 'number') return linked
        return call(ctx, 'PATCH', `${M}/${enc(id)}`, { body: { text: linked } })
      }
      case 'delete': {
        const id = msgId()
        if (rest.length > 1) break
        return call(ctx, 'DELETE', `${M}/${enc(id)}`)
      }
      case 'react': {
        const id = msgId()
        if (rest.length !== 2) throw new UsageError(`svc chat react: ${rest.length < 2 ? 'missing EMOJI' : `unexpected argument ${rest[2]}`}\n${USAGE}`)
        return react(ctx, spaceId, chat, id, rest[1], values.remove === true)
      }
      case 'read': {
        if (values.all === true ? rest.length > 0 : rest.length !== 1)
          throw new UsageError(`svc chat read: give MSG_ID or --all${rest.length > 1 ? ` (unexpected argument ${rest[1]})` : ''}\n${USAGE}`)
        const code = await call(ctx, 'POST', values.all === true ? `${S}/objects/${enc(chat)}/chat/read-all` : `${M}/${enc(rest[0])}/read`)
        if (code === EXIT.ok) io.stdout.write(terminalSafe(values.all === true ? 'marked the chat read' : `marked read up to ${rest[0]}`) + '\n')
        return code
      }
    }
    throw new UsageError(USAGE)
  },
}
