import { call, parseClientArgs } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc } from './args.ts'

const USAGE = `usage: svc one-to-one IDENTITY                     start (or accept, or un-decline) a one-to-one
       svc one-to-one pending                      one-to-ones waiting for an answer
       svc one-to-one accept SPACE_ID
       svc one-to-one decline SPACE_ID
       svc one-to-one register IDENTITY [--hint TEXT]  a one-to-one learnt out of band
${COMMON_HELP}`

export const oneToOneCommand: Command = {
  name: 'one-to-one',
  summary: 'start, accept or decline one-to-one spaces',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { hint: { type: 'string' } }, io, USAGE)
    const [sub, ...rest] = positionals
    switch (sub) {
      case undefined:
        break
      case 'pending':
        if (rest.length > 0) break
        return call(ctx, 'GET', '/v1/spaces?status=one_to_one_pending')
      case 'accept':
      case 'decline':
        if (rest.length !== 1) break
        return call(ctx, 'POST', `/v1/spaces/${enc(rest[0])}/one-to-one/${sub}`)
      case 'register':
        if (rest.length !== 1) break
        return call(ctx, 'POST', '/v1/spaces/one-to-one/register-incoming', {
          body: { peerIdentity: rest[0], ...(values.hint !== undefined ? { displayHint: values.hint } : {}) },
        })
      default:
        if (rest.length > 0 || values.hint !== undefined) break
        return call(ctx, 'POST', '/v1/spaces/one-to-one', { body: { otherIdentity: sub } })
    }
    throw new UsageError(USAGE)
  },
}
