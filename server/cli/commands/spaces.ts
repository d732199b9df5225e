import { need, parseClientArgs, show } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { COMMON_HELP } from './args.ts'

const USAGE = `usage: svc spaces [list] [--status all|active|deleted|...]
       svc spaces create NAME [--description TEXT]      (prints the new space's id)
       svc spaces get SPACE_ID
       svc spaces delete SPACE_ID
  list shows name, your role, status and id.
${COMMON_HELP}`

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
        return show(
          ctx,
          // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- the query is built from flags the schema accepts; openapi-fetch's generated type wants every optional key spelled out
          (c) => c.GET('/v1/spaces', { params: { query } as never }),
          (d) =>
            table(
              ['NAME', 'ROLE', 'STATUS', 'ID'],
              (d as { name: string; ownRole: string; status: string; id: string }[]).map((s) => [s.name, s.ownRole, s.status, s.id]),
            ),
        )
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
