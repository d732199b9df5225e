import { bundleRootId } from '../../../sync/space/bundles/model.ts'
import { call, fetchApi, need, parseClientArgs, show, type ClientContext } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { table, terminalSafe } from '../table.ts'
import { COMMON_HELP, enc } from './args.ts'

const USAGE = `usage: svc push token                                  whether this device registered a token
       svc push token set TOKEN --platform ios|android|ntfy|webpush
       svc push token rm                               forget it (wins locally even if the node is away)
       svc push subscriptions                          topics this device holds at the push node
       svc push settings [SPACE_ID] [--chat OBJECT_ID] notify modes: of every space, or of one and a chat
       svc push settings set SPACE_ID all|mentions|none|inherit [--chat OBJECT_ID]
  token and subscriptions answer 409 push.disabled while no push node is configured
  (svc serve --help: the push keys). settings are the notify modes of chat.md: a space's
  settings.notifyMode (PATCH /v1/spaces/SPACE/settings), and a chat's own chat.notifyMode, which
  overrides it (--chat; the general chat when --chat is absent and SPACE_ID is given). inherit
  unsets the value: a chat then follows its space, a space the default, all.
${COMMON_HELP}`

const MODES = ['all', 'mentions', 'none']
const GENERAL_CHAT = 'system:general-chat/v1'

interface SpaceRow {
  id: string
  name: string
  settings?: Record<string, unknown>
}

/** A chat's own `chat.notifyMode`: the mode, undefined when it inherits, or the exit code of a failed read. */
async function chatMode(ctx: ClientContext, spaceId: string, chat: string): Promise<{ mode?: string; found: boolean } | number> {
  const r = await fetchApi(ctx, (c) =>
    // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- a snapshot body the server's schema checks; the generated type spells every optional key
    c.POST('/v1/spaces/{spaceId}/objects/query', { params: { path: { spaceId } }, body: { filter: { id: chat }, limit: 1 } as never }),
  )
  if (!r.ok) return r.code
  const row = (r.data as { records: { chat?: { notifyMode?: string } }[] }).records[0]
  return { found: row !== undefined, ...(row?.chat?.notifyMode !== undefined ? { mode: row.chat.notifyMode } : {}) }
}

export const pushCommand: Command = {
  name: 'push',
  summary: "this device's push token, its topics, and the notify modes of spaces and chats",
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { platform: { type: 'string' }, chat: { type: 'string' } }, io, USAGE)
    const [area, ...rest] = positionals
    if (area !== 'token' && values.platform !== undefined) throw new UsageError(`svc push: --platform belongs to push token set\n${USAGE}`)
    if (area !== 'settings' && values.chat !== undefined) throw new UsageError(`svc push: --chat belongs to push settings\n${USAGE}`)
    switch (area) {
      case 'token': {
        const [sub, ...more] = rest
        if (sub !== 'set' && values.platform !== undefined) throw new UsageError(`svc push token: --platform belongs to set\n${USAGE}`)
        if (sub === undefined)
          return show(
            ctx,
            (c) => c.GET('/v1/push/token'),
            (d) => (d.registered ? `registered (${d.platform ?? 'unknown platform'})\n` : 'no token registered on this device\n'),
          )
        if (sub === 'set') {
          const [token] = need('push token set', more, ['TOKEN'], USAGE) as [string]
          const platform = values.platform as string | undefined
          if (platform === undefined) throw new UsageError(`svc push token set: missing --platform\n${USAGE}`)
          const code = await show(ctx, (c) => c.POST('/v1/push/token', { body: { platform: platform as 'ios', token } }))
          if (code === EXIT.ok) io.stdout.write(terminalSafe(`registered a ${platform} token`) + '\n')
          return code
        }
        if (sub === 'rm') {
          need('push token rm', more, [], USAGE)
          const code = await show(ctx, (c) => c.DELETE('/v1/push/token'))
          if (code === EXIT.ok) io.stdout.write('removed the push token of this device\n')
          return code
        }
        throw new UsageError(`svc push token: unknown subcommand ${sub}\n${USAGE}`)
      }
      case 'subscriptions':
        need('push subscriptions', rest, [], USAGE)
        return show(
          ctx,
          (c) => c.GET('/v1/push/subscriptions'),
          (d) =>
            table(
              ['SPACE KEY', 'TOPIC'],
              d.subscriptions.map((s) => [s.spaceKey, s.topic]),
            ),
        )
      case 'settings': {
        if (rest[0] === 'set') {
          const [spaceId, mode] = need('push settings set', rest.slice(1), ['SPACE_ID', 'MODE'], USAGE) as [string, string]
          if (![...MODES, 'inherit'].includes(mode)) throw new UsageError(`svc push settings set: MODE is all, mentions, none or inherit (got ${mode})\n${USAGE}`)
          const S = `/v1/spaces/${enc(spaceId)}`
          if (values.chat !== undefined) return call(ctx, 'POST', `${S}/properties/${enc(values.chat)}/set/chat`, { body: { notifyMode: mode === 'inherit' ? null : mode } })
          return call(ctx, 'PATCH', `${S}/settings`, { body: mode === 'inherit' ? { unset: ['notifyMode'] } : { set: { notifyMode: mode } } })
        }
        if (rest.length === 0) {
          if (values.chat !== undefined) throw new UsageError(`svc push settings: --chat needs SPACE_ID\n${USAGE}`)
          return show(
            ctx,
            (c) => c.GET('/v1/spaces', { params: { query: {} } }),
            (d) =>
              table(
                ['NAME', 'NOTIFY', 'ID'],
                (d as SpaceRow[]).map((s) => [s.name, (s.settings?.notifyMode as string | undefined) ?? 'all (default)', s.id]),
              ),
          )
        }
        const [spaceId] = need('push settings', rest, ['SPACE_ID'], USAGE) as [string]
        const space = await fetchApi(ctx, (c) => c.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId } } }))
        if (!space.ok) return space.code
        const spaceMode = (space.data as SpaceRow).settings?.notifyMode as string | undefined
        const chat = (values.chat as string | undefined) ?? bundleRootId(spaceId, GENERAL_CHAT)
        const own = await chatMode(ctx, spaceId, chat)
        if (typeof own === 'number') return own
        if (values.chat !== undefined && !own.found) {
          io.stderr.write(terminalSafe(`svc push settings: no object ${chat} in space ${spaceId}`) + '\n')
          return EXIT.user
        }
        if (ctx.json) {
          io.stdout.write(JSON.stringify({ space: spaceMode ?? null, ...(own.found ? { chat: { objectId: chat, notifyMode: own.mode ?? null } } : {}) }, null, 2) + '\n')
          return EXIT.ok
        }
        const lines = [`space: ${spaceMode ?? 'all (default)'}`]
        if (own.found) lines.push(`chat ${chat}: ${own.mode ?? `inherit (${spaceMode ?? 'all'})`}`)
        io.stdout.write(terminalSafe(lines.join('\n'), '\n') + '\n')
        return EXIT.ok
      }
    }
    throw new UsageError(`svc push: ${area === undefined ? 'missing a subcommand' : `unknown subcommand ${area}`} (token, subscriptions, settings)\n${USAGE}`)
  },
}
