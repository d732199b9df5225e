import { call, need, parseClientArgs } from '../client.ts'
import type { Command } from '../io.ts'
import { COMMON_HELP, enc, WINDOW_OPTIONS, windowBody } from './args.ts'

const USAGE = `usage: svc query SPACE OBJECT DATASET [--filter JSON] [--sort FIELD ...] [--limit N] [--offset N] [--total]
${COMMON_HELP}`

export const queryCommand: Command = {
  name: 'query',
  summary: "query the records of one object's dataset",
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { ...WINDOW_OPTIONS, total: { type: 'boolean' } }, io, USAGE)
    need('query', positionals, ['SPACE_ID', 'OBJECT_ID', 'DATASET'], USAGE)
    const [space, objectId, dataset] = positionals
    const body = { objectId, dataset, ...windowBody(values, USAGE), ...(values.total ? { includeTotal: true } : {}) }
    return call(ctx, 'POST', `/v1/spaces/${enc(space)}/query`, { body })
  },
}
