import { Writable } from 'node:stream'
import { fetchApi, need, parseClientArgs, show, type ClientContext } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { COMMON_HELP } from './args.ts'

const USAGE = `usage: svc spaces [list] [--status all|active|deleted|...]
       svc spaces create NAME [--description TEXT]      (prints the new space's id)
       svc spaces get SPACE_ID
       svc spaces delete SPACE_ID
  list shows name, your role, status and id; a space you were removed from reads removed.
${COMMON_HELP}`

interface SpaceRow {
  name: string
  ownRole: string
  status: string
  id: string
}

/**
 * The STATUS a row shows. An active row where this account has no role is a space it was
 * removed from (issue 39 item 6): the members list (with removed members) says so, and the row
 * reads `removed` instead of `active`. Any other row shows its status as the API gives it.
 */
async function shownStatus(ctx: ClientContext, s: SpaceRow): Promise<string> {
  if (s.status !== 'active' || s.ownRole !== 'none') return s.status
  const quiet = { ...ctx, io: { ...ctx.io, stderr: new Writable({ write: (_c, _e, cb) => cb() }) } }
  const r = await fetchApi(quiet, (c) => c.GET('/v1/spaces/{spaceId}/members', { params: { path: { spaceId: s.id }, query: { status: 'all' } } }))
  return r.ok && r.data.members.some((m) => m.self && m.status === 'removed') ? 'removed' : s.status
}

const SUBCOMMANDS = new Set(['list', 'create', 'get', 'delete'])

export const spacesCommand: Command = {
  name: 'spaces',
  summary: 'list, create, show or delete spaces',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { status: { type: 'string' }, description: { type: 'string' } }, io, USAGE)
    const [sub = 'list', ...rest] = positionals
    if (!SUBCOMMANDS.has(sub)) throw new UsageError(`svc spaces: unknown subcommand ${sub}\n${USAGE}`)
    switch (sub) {
      case 'list': {
        need('spaces list', rest, [], USAGE)
        const query = values.status !== undefined ? { status: values.status as string } : {}
        // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- the query is built from flags the schema accepts; openapi-fetch's generated type wants every optional key spelled out
        const r = await fetchApi(ctx, (c) => c.GET('/v1/spaces', { params: { query } as never }))
        if (!r.ok) return r.code
        const rows = r.data as SpaceRow[]
        if (ctx.json) {
          io.stdout.write(JSON.stringify(rows, null, 2) + '\n')
          return EXIT.ok
        }
        const statuses = await Promise.all(rows.map((s) => shownStatus(ctx, s)))
        io.stdout.write(
          table(
            ['NAME', 'ROLE', 'STATUS', 'ID'],
            rows.map((s, i) => [s.name, s.ownRole, statuses[i], s.id]),
          ),
        )
        return EXIT.ok
      }
      case 'create': {
        const [name] = need('spaces create', rest, ['NAME'], USAGE) as [string]
        const body = { name, ...(values.description !== undefined ? { description: values.description as string } : {}) }
        return show(
          ctx,
          (c) => c.POST('/v1/spaces', { body }),
          (d) => `${(d as { id: string }).id}\n`,
        )
      }
      case 'get': {
        const [spaceId] = need('spaces get', rest, ['SPACE_ID'], USAGE) as [string]
        return show(ctx, (c) => c.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId } } }))
      }
      case 'delete': {
        const [spaceId] = need('spaces delete', rest, ['SPACE_ID'], USAGE) as [string]
        return show(ctx, (c) => c.DELETE('/v1/spaces/{spaceId}', { params: { path: { spaceId } } }))
      }
    }
    throw new UsageError(USAGE)
  },
}
