import { need, parseClientArgs, show } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { loadSchema, resolvePath, resolveType } from '../xkeys.ts'
import { COMMON_HELP } from './args.ts'

const USAGE = `usage: svc props [list] SPACE_ID TYPE
       svc props create SPACE_ID TYPE NAME --kind KIND [--key XKEY] [--format SLUG] [--scope synced|account|local]
       svc props delete SPACE_ID TYPE PROPERTY
  TYPE is a type id, xKey or name; PROPERTY a property id, xKey or name. KIND: string, number,
  boolean, array, object, datetime. list shows xKey, name, kind and id; create prints the id.
${COMMON_HELP}`

const SUBCOMMANDS = new Set(['list', 'create', 'delete'])

export const propsCommand: Command = {
  name: 'props',
  summary: 'list, define or remove the properties of a type',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      { kind: { type: 'string' }, key: { type: 'string' }, format: { type: 'string' }, scope: { type: 'string' } },
      io,
      USAGE,
    )
    const [sub, ...rest] = positionals[0] !== undefined && SUBCOMMANDS.has(positionals[0]) ? positionals : ['list', ...positionals]
    if (!SUBCOMMANDS.has(sub)) throw new UsageError(USAGE)
    const names = sub === 'list' ? ['SPACE_ID', 'TYPE'] : sub === 'create' ? ['SPACE_ID', 'TYPE', 'NAME'] : ['SPACE_ID', 'TYPE', 'PROPERTY']
    const [spaceId, typeKey, third] = need(`props ${sub}`, rest, names, USAGE) as [string, string, string | undefined]
    const schema = await loadSchema(ctx, spaceId)
    if (typeof schema === 'number') return schema
    const typeId = resolveType(schema, typeKey)
    const path = { spaceId, typeId }
    switch (sub) {
      case 'list':
        return show(
          ctx,
          (c) => c.GET('/v1/spaces/{spaceId}/types/{typeId}/properties', { params: { path } }),
          (d) =>
            table(
              ['XKEY', 'NAME', 'KIND', 'ID'],
              d.properties.map((p) => [p.xKey ?? '', p.name, p.kind, p.id]),
            ),
        )
      case 'create': {
        if (values.kind === undefined) throw new UsageError(`svc props create: missing --kind\n${USAGE}`)
        const body = {
          name: third,
          kind: values.kind,
          ...(values.key !== undefined ? { xKey: values.key } : {}),
          ...(values.format !== undefined ? { format: values.format } : {}),
          ...(values.scope !== undefined ? { scope: values.scope } : {}),
        }
        return show(
          ctx,
          (c) => c.POST('/v1/spaces/{spaceId}/types/{typeId}/properties', { params: { path }, body }),
          (d) => `${d.propId}\n`,
        )
      }
      case 'delete': {
        const propId = resolvePath(schema, `${typeId}.${third}`).split('.')[1]
        return show(ctx, (c) => c.DELETE('/v1/spaces/{spaceId}/types/{typeId}/properties/{propId}', { params: { path: { ...path, propId } } }))
      }
    }
    throw new UsageError(USAGE)
  },
}
