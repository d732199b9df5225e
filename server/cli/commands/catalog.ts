import { need, parseClientArgs, show } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { COMMON_HELP } from './args.ts'

const USAGE = `usage: svc catalog [list]
       svc catalog get USECASE
       svc catalog setup USECASE SPACE_ID
  The usecases shipped with svc (general-chat, task-tracker, ...; docs/bundles.md). setup
  installs a usecase's bundles into a space (its dependencies first) and prints the result.
${COMMON_HELP}`

export const catalogCommand: Command = {
  name: 'catalog',
  summary: 'the usecases shipped with svc, and setting one up in a space',
  usage: USAGE,
  async run(args, io) {
    const { ctx, positionals } = parseClientArgs(args, {}, io, USAGE)
    const [sub, ...rest] = positionals[0] !== undefined ? positionals : ['list']
    switch (sub) {
      case 'list':
        need('catalog list', rest, [], USAGE)
        return show(
          ctx,
          (c) => c.GET('/v1/catalog'),
          (d) =>
            table(
              ['ID', 'NAME', 'DESCRIPTION'],
              d.usecases.map((u) => [u.id, u.name, u.description]),
            ),
        )
      case 'get': {
        const [usecaseId] = need('catalog get', rest, ['USECASE'], USAGE) as [string]
        return show(ctx, (c) => c.GET('/v1/catalog/{usecaseId}', { params: { path: { usecaseId } } }))
      }
      case 'setup': {
        const [usecaseId, spaceId] = need('catalog setup', rest, ['USECASE', 'SPACE_ID'], USAGE) as [string, string]
        return show(ctx, (c) => c.POST('/v1/catalog/{usecaseId}/setup', { params: { path: { usecaseId } }, body: { spaceId } }))
      }
    }
    throw new UsageError(`svc catalog: unknown subcommand ${sub}\n${USAGE}`)
  },
}
