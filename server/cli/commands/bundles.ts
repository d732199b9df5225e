import { readFileSync } from 'node:fs'
import { need, parseClientArgs, show } from '../client.ts'
import { readAll, UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { COMMON_HELP } from './args.ts'

const USAGE = `usage: svc bundles [list] SPACE_ID
       svc bundles get SPACE_ID BUNDLE_ID
       svc bundles install SPACE_ID [--file FILE]          (the bundle JSON on stdin without --file)
       svc bundles child SPACE_ID BUNDLE_ID SEED [--type TYPE ...]
  Bundles (docs/bundles.md): install adopts or installs a bundle; child creates (or finds) the
  derived child object with that seed and prints its id. The catalog: svc catalog.
${COMMON_HELP}`

const SUBCOMMANDS = new Set(['list', 'get', 'install', 'child'])

export const bundlesCommand: Command = {
  name: 'bundles',
  summary: 'list, show or install the bundles of a space',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { file: { type: 'string' }, type: { type: 'string', multiple: true } }, io, USAGE)
    const [sub, ...rest] = positionals[0] !== undefined && SUBCOMMANDS.has(positionals[0]) ? positionals : ['list', ...positionals]
    switch (sub) {
      case 'list': {
        const [spaceId] = need('bundles', rest, ['SPACE_ID'], USAGE) as [string]
        return show(
          ctx,
          (c) => c.GET('/v1/spaces/{spaceId}/bundles', { params: { path: { spaceId } } }),
          (d) =>
            table(
              ['ID', 'NAME', 'ROOT', 'READY'],
              d.bundles.map((b) => [b.id, b.name, b.rootId, b.ready]),
            ),
        )
      }
      case 'get': {
        const [spaceId, bundleId] = need('bundles get', rest, ['SPACE_ID', 'BUNDLE_ID'], USAGE) as [string, string]
        return show(ctx, (c) => c.GET('/v1/spaces/{spaceId}/bundles/{bundleId}', { params: { path: { spaceId, bundleId } } }))
      }
      case 'install': {
        const [spaceId] = need('bundles install', rest, ['SPACE_ID'], USAGE) as [string]
        const text = values.file !== undefined ? readFileSync(values.file as string, 'utf8') : await readAll(io.stdin)
        let body: never
        try {
          body = JSON.parse(text) as never
        } catch {
          throw new UsageError(`svc bundles install: the bundle must be JSON\n${USAGE}`)
        }
        return show(ctx, (c) => c.POST('/v1/spaces/{spaceId}/bundles', { params: { path: { spaceId } }, body }))
      }
      case 'child': {
        const [spaceId, bundleId, seed] = need('bundles child', rest, ['SPACE_ID', 'BUNDLE_ID', 'SEED'], USAGE) as [string, string, string]
        const types = (values.type as string[] | undefined) ?? []
        const body = { seed, ...(types.length ? { types } : {}) }
        return show(
          ctx,
          (c) => c.POST('/v1/spaces/{spaceId}/bundles/{bundleId}/children', { params: { path: { spaceId, bundleId } }, body }),
          (d) => `${d.objectId}\n`,
        )
      }
    }
    throw new UsageError(USAGE)
  },
}
