import { call, parseClientArgs } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc, jsonOption, WINDOW_OPTIONS, windowBody } from './args.ts'

const USAGE = `usage: svc objects create SPACE [--type TYPE_ID ...] [--name NAME] [--props JSON]
       svc objects query SPACE [--filter JSON] [--sort FIELD ...] [--limit N] [--offset N]
  --props: initialProperties grouped by type key, e.g. '{"core":{"tags":["a"]}}'
${COMMON_HELP}`

export const objectsCommand: Command = {
  name: 'objects',
  summary: 'create objects or query the objects of a space',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      { type: { type: 'string', multiple: true }, name: { type: 'string' }, props: { type: 'string' }, ...WINDOW_OPTIONS },
      io,
      USAGE,
    )
    const [sub, space, ...rest] = positionals
    if (space === undefined || rest.length > 0) throw new UsageError(USAGE)
    switch (sub) {
      case 'create': {
        const props = (jsonOption('props', values.props, USAGE) ?? {}) as Record<string, Record<string, unknown>>
        if (values.name !== undefined) props.core = { ...(props.core ?? {}), name: values.name }
        const types = values.type as string[] | undefined
        const body = { ...(types?.length ? { types } : {}), ...(Object.keys(props).length ? { initialProperties: props } : {}) }
        return call(ctx, 'POST', `/v1/spaces/${enc(space)}/objects`, { body })
      }
      case 'query':
        return call(ctx, 'POST', `/v1/spaces/${enc(space)}/objects/query`, { body: windowBody(values, USAGE) })
    }
    throw new UsageError(USAGE)
  },
}
