import { Writable } from 'node:stream'
import { fetchApi, need, parseClientArgs, show, type ClientContext } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { assignment, COMMON_HELP } from './args.ts'

const USAGE = `usage: svc spaces [list] [--status all|active|deleted|...]
       svc spaces create NAME [--description TEXT]      (prints the new space's id)
       svc spaces get SPACE_ID
       svc spaces delete SPACE_ID
       svc spaces set SPACE_ID [--name NAME] [--description TEXT] [--icon CID]
       svc spaces settings SPACE_ID [--set KEY=VALUE]... [--unset KEY]...
  set changes the space's name, description or icon for every member (an empty value clears).
  settings are this account's own settings of the space (synced to its devices, seen by no
  other member; notifyMode is all, mentions or none, see svc push settings): shown without
  --set or --unset; VALUE is JSON when it parses (true, 3), else text.
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

const SUBCOMMANDS = new Set(['list', 'create', 'get', 'delete', 'set', 'settings'])

export const spacesCommand: Command = {
  name: 'spaces',
  summary: 'list, create, show, rename or delete spaces; their settings',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      {
        status: { type: 'string' },
        description: { type: 'string' },
        name: { type: 'string' },
        icon: { type: 'string' },
        set: { type: 'string', multiple: true },
        unset: { type: 'string', multiple: true },
      },
      io,
      USAGE,
    )
    const [sub = 'list', ...rest] = positionals
    if (!SUBCOMMANDS.has(sub)) throw new UsageError(`svc spaces: unknown subcommand ${sub}\n${USAGE}`)
    const stray = (['name', 'icon', 'set', 'unset'] as const).find((o) => values[o] !== undefined && !(o === 'set' || o === 'unset' ? sub === 'settings' : sub === 'set'))
    if (stray !== undefined) throw new UsageError(`svc spaces ${sub}: --${stray} is not an option of ${sub}\n${USAGE}`)
    switch (sub) {
      case 'set': {
        const [spaceId] = need('spaces set', rest, ['SPACE_ID'], USAGE) as [string]
        const body = {
          ...(values.name !== undefined ? { name: values.name as string } : {}),
          ...(values.description !== undefined ? { description: values.description as string } : {}),
          ...(values.icon !== undefined ? { iconCid: values.icon as string } : {}),
        }
        if (Object.keys(body).length === 0) throw new UsageError(`svc spaces set: give --name, --description or --icon\n${USAGE}`)
        const code = await show(ctx, (c) => c.PATCH('/v1/spaces/{spaceId}', { params: { path: { spaceId } }, body }))
        if (code === EXIT.ok) io.stdout.write('space updated\n')
        return code
      }
      case 'settings': {
        const [spaceId] = need('spaces settings', rest, ['SPACE_ID'], USAGE) as [string]
        const sets = ((values.set as unknown as string[] | undefined) ?? []).map((a) => assignment(a, USAGE))
        const unset = (values.unset as unknown as string[] | undefined) ?? []
        if (sets.length === 0 && unset.length === 0)
          return show(
            ctx,
            (c) => c.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId } } }),
            (d) =>
              table(
                ['KEY', 'VALUE'],
                Object.entries((d as { settings?: Record<string, unknown> }).settings ?? {})
                  .sort(([a], [b]) => a.localeCompare(b))
                  .map(([k, v]) => [k, v]),
              ),
          )
        // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- settings values are the user's scalars, checked by the server's schema
        const body = { set: Object.fromEntries(sets.map((a) => [a.path, a.value])), unset } as { set: Record<string, never>; unset: string[] }
        const code = await show(ctx, (c) => c.PATCH('/v1/spaces/{spaceId}/settings', { params: { path: { spaceId } }, body }))
        if (code === EXIT.ok) io.stdout.write('settings updated\n')
        return code
      }
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
