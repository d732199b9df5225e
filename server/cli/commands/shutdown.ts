import { call, parseClientArgs } from '../client.ts'
import { UsageError, type Command } from '../io.ts'

const USAGE = 'usage: svc shutdown [--url URL] [--token TOKEN]   (managed servers)'

export const shutdownCommand: Command = {
  name: 'shutdown',
  summary: 'stop a managed daemon',
  usage: USAGE,
  async run(args, io) {
    const { ctx, positionals } = parseClientArgs(args, {}, io, USAGE)
    if (positionals.length > 0) throw new UsageError(USAGE)
    return call(ctx, 'POST', '/v1/shutdown', { control: true })
  },
}
