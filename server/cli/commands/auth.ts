import { call, parseClientArgs } from '../client.ts'
import { readAll, stripNewline, UsageError, type Command } from '../io.ts'

const USAGE = `usage: svc auth status
       svc auth create                                (prints the mnemonic once)
       svc auth restore [--index N] [--replace]       (mnemonic on stdin)
       svc auth select ACCOUNT_ID                     (standalone)
       svc auth logout                                (managed)
  common: --url URL (default $SVC_URL or http://127.0.0.1:7001)
          --token TOKEN (managed servers; default $SVC_CONTROL_TOKEN)`

export const authCommand: Command = {
  name: 'auth',
  summary: 'show, create, restore, select or sign out of the account',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { index: { type: 'string' }, replace: { type: 'boolean' } }, io, USAGE)
    const [sub, ...rest] = positionals
    if (sub === undefined) throw new UsageError(`svc auth: missing a subcommand (status, create, restore, select, logout)\n${USAGE}`)
    const replace = values.replace === true ? { replace: true } : {}
    switch (sub) {
      case 'status':
        if (rest.length > 0) break
        return call(ctx, 'GET', '/v1/auth')
      case 'create':
        if (rest.length > 0) break
        io.stderr.write('svc: the mnemonic below is shown once and never stored: write it down\n')
        return call(ctx, 'POST', '/v1/auth', { body: {}, control: true })
      case 'restore': {
        if (rest.length > 0) break
        const mnemonic = stripNewline(await readAll(io.stdin)).trim()
        if (mnemonic === '') throw new UsageError('svc auth restore: pass the mnemonic on stdin')
        let index = {}
        if (values.index !== undefined) {
          if (!/^\d+$/.test(values.index as string)) throw new UsageError('svc auth restore: --index must be a non-negative integer')
          index = { index: Number(values.index) }
        }
        return call(ctx, 'POST', '/v1/auth', { body: { mnemonic, ...index, ...replace }, control: true })
      }
      case 'select':
        if (rest.length === 0) throw new UsageError(`svc auth select: missing ACCOUNT_ID\n${USAGE}`)
        if (rest.length !== 1) break
        return call(ctx, 'POST', '/v1/auth', { body: { accountId: rest[0], ...replace }, control: true })
      case 'logout':
        if (rest.length > 0) break
        return call(ctx, 'DELETE', '/v1/auth', { control: true })
    }
    throw new UsageError(USAGE)
  },
}
