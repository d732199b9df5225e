import { need, parseClientArgs, show } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { loadSchema, resolveType } from '../xkeys.ts'
import { COMMON_HELP } from './args.ts'

const USAGE = `usage: svc types [list] SPACE_ID [--all]
       svc types create SPACE_ID XKEY [--name NAME] [--description TEXT] [--hidden]
       svc types get SPACE_ID TYPE
       svc types part SPACE_ID TYPE KEY (--editor | --datasets JSON)
  TYPE is a type id, xKey or name. list shows xKey, name and id (--all: hidden and built-in
  types too); create prints the new type's id. part adds a part: --editor gives the type's
  objects the shared markdown editor (svc md), --datasets declares datasets (docs/types.md).
${COMMON_HELP}`

const SUBCOMMANDS = new Set(['list', 'create', 'get', 'part'])

export const typesCommand: Command = {
  name: 'types',
  summary: 'list, create or show the types of a space',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      {
        all: { type: 'boolean' },
        editor: { type: 'boolean' },
        datasets: { type: 'string' },
        name: { type: 'string' },
        description: { type: 'string' },
        hidden: { type: 'boolean' },
      },
      io,
      USAGE,
    )
    const [sub, ...rest] = positionals[0] !== undefined && SUBCOMMANDS.has(positionals[0]) ? positionals : ['list', ...positionals]
    switch (sub) {
      case 'list': {
        const [spaceId] = need('types list', rest, ['SPACE_ID'], USAGE)
        return show(
          ctx,
          (c) => c.GET('/v1/spaces/{spaceId}/types', { params: { path: { spaceId: spaceId }, query: { includeHidden: values.all === true } } }),
          (d) =>
            table(
              ['XKEY', 'NAME', 'ID'],
              d.types.map((t) => [t.xKey, t.name + (t.id === t.xKey ? ' (built-in)' : '') + (t.hidden ? ' (hidden)' : ''), t.id]),
            ),
        )
      }
      case 'create': {
        const [spaceId, xKey] = need('types create', rest, ['SPACE_ID', 'XKEY'], USAGE)
        const body = {
          xKey: xKey,
          name: (values.name as string | undefined) ?? xKey,
          ...(values.description !== undefined ? { description: values.description as string } : {}),
          ...(values.hidden === true ? { hidden: true } : {}),
        }
        return show(
          ctx,
          (c) => c.POST('/v1/spaces/{spaceId}/types', { params: { path: { spaceId: spaceId } }, body }),
          (t) => `${t.id}\n`,
        )
      }
      case 'get': {
        const [spaceId, key] = need('types get', rest, ['SPACE_ID', 'TYPE'], USAGE)
        const schema = await loadSchema(ctx, spaceId)
        if (typeof schema === 'number') return schema
        const typeId = resolveType(schema, key)
        return show(ctx, (c) => c.GET('/v1/spaces/{spaceId}/types/{typeId}', { params: { path: { spaceId: spaceId, typeId } } }))
      }
      case 'part': {
        const [spaceId, typeKey, key] = need('types part', rest, ['SPACE_ID', 'TYPE', 'KEY'], USAGE) as [string, string, string]
        if ((values.editor === true) === (values.datasets !== undefined)) throw new UsageError(`svc types part: give --editor or --datasets\n${USAGE}`)
        let datasets: unknown = [{ module: 'editor', shared: true }]
        if (values.datasets !== undefined) {
          try {
            datasets = JSON.parse(values.datasets as string)
          } catch {
            throw new UsageError(`--datasets must be JSON\n${USAGE}`)
          }
        }
        const schema = await loadSchema(ctx, spaceId)
        if (typeof schema === 'number') return schema
        const typeId = resolveType(schema, typeKey)
        // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- datasets is the user's JSON, checked by the server's schema
        const body = { key, datasets } as { key: string; datasets: never }
        return show(
          ctx,
          (c) => c.POST('/v1/spaces/{spaceId}/types/{typeId}/parts', { params: { path: { spaceId, typeId } }, body }),
          (d) => `${d.partId}\n`,
        )
      }
    }
    throw new UsageError(USAGE)
  },
}
