import { call, need, parseClientArgs } from '../client.ts'
import type { Command } from '../io.ts'
import { COMMON_HELP } from './args.ts'

const USAGE = `usage: svc join TOKEN [--name NAME]
  Asks to join the space of an invite or guest token; prints the joining space row. The
  space turns active once a manager accepts (guest tokens: at once). --name is what the
  space's managers see of you while they decide.
${COMMON_HELP}`

export const joinCommand: Command = {
  name: 'join',
  summary: 'join a space with an invite or guest token',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { name: { type: 'string' } }, io, USAGE)
    need('join', positionals, ['TOKEN'], USAGE)
    const body = { inviteToken: positionals[0], ...(values.name !== undefined ? { metadata: { name: values.name } } : {}) }
    return call(ctx, 'POST', '/v1/spaces/join', { body })
  },
}
