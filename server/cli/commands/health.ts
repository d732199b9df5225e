import { call, parseClientArgs } from '../client.ts'
import { UsageError, type Command } from '../io.ts'

const USAGE = 'usage: svc health [--url URL]'

export const healthCommand: Command = {
  name: 'health',
  summary: 'show the daemon health record',
  usage: USAGE,
  async run(args, io) {
    const { ctx, positionals } = parseClientArgs(args, {}, io, USAGE)
    if (positionals.length > 0) throw new UsageError(USAGE)
    return call(ctx, 'GET', '/v1/health')
  },
}
