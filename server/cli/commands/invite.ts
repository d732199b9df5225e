import { call, parseClientArgs } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc } from './args.ts'

const USAGE = `usage: svc invite create SPACE_ID [--permission reader|writer]
       svc invite list SPACE_ID
       svc invite revoke SPACE_ID [RECORD_ID]    (without RECORD_ID: every member invite)
  create prints {spaceId, inviteToken}: give the token to the person joining (svc join TOKEN).
  A new invite replaces the previous one.
${COMMON_HELP}`

export const inviteCommand: Command = {
  name: 'invite',
  summary: 'create, list or revoke the invites of a space',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { permission: { type: 'string' } }, io, USAGE)
    const [sub, spaceId, ...rest] = positionals
    if (sub === undefined) throw new UsageError(`svc invite: missing a subcommand (create, list, revoke)\n${USAGE}`)
    if (spaceId === undefined) throw new UsageError(`svc invite ${sub}: missing SPACE_ID\n${USAGE}`)
    const S = `/v1/spaces/${enc(spaceId)}`
    switch (sub) {
      case 'create':
        if (rest.length > 0) break
        return call(ctx, 'POST', `${S}/invites`, { body: values.permission !== undefined ? { permission: values.permission } : {} })
      case 'list':
        if (rest.length > 0 || values.permission !== undefined) break
        return call(ctx, 'GET', `${S}/invites`)
      case 'revoke':
        if (rest.length > 1 || values.permission !== undefined) break
        return call(ctx, 'DELETE', rest.length ? `${S}/invites/${enc(rest[0])}` : `${S}/invites`)
    }
    throw new UsageError(USAGE)
  },
}
