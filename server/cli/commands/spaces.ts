import { call, parseClientArgs } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc } from './args.ts'

const USAGE = `usage: svc spaces [list] [--status all|active|deleted|...]
       svc spaces create NAME [--description TEXT]
       svc spaces get SPACE_ID
       svc spaces delete SPACE_ID
${COMMON_HELP}`

export const spacesCommand: Command = {
  name: 'spaces',
  summary: 'list, create, show or delete spaces',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { status: { type: 'string' }, description: { type: 'string' } }, io, USAGE)
    const [sub = 'list', ...rest] = positionals
    switch (sub) {
      case 'list':
        if (rest.length > 0) break
        return call(ctx, 'GET', `/v1/spaces${values.status !== undefined ? `?status=${enc(values.status as string)}` : ''}`)
      case 'create':
        if (rest.length !== 1) break
        return call(ctx, 'POST', '/v1/spaces', { body: { name: rest[0], ...(values.description !== undefined ? { description: values.description } : {}) } })
      case 'get':
        if (rest.length !== 1) break
        return call(ctx, 'GET', `/v1/spaces/${enc(rest[0])}`)
      case 'delete':
        if (rest.length !== 1) break
        return call(ctx, 'DELETE', `/v1/spaces/${enc(rest[0])}`)
    }
    throw new UsageError(USAGE)
  },
}
