import { parseClientArgs, show } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { COMMON_HELP } from './args.ts'

const USAGE = `usage: svc profile [get]                      your account id, name, description and icon
       svc profile set [--name NAME] [--description TEXT] [--icon CID]
  set changes the fields given (at least one); an empty value clears a field. Members of your
  spaces see the profile once it syncs.
${COMMON_HELP}`

export const profileCommand: Command = {
  name: 'profile',
  summary: "show or change this account's profile (name, description, icon)",
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { name: { type: 'string' }, description: { type: 'string' }, icon: { type: 'string' } }, io, USAGE)
    const [sub = 'get', ...rest] = positionals
    if (rest.length > 0) throw new UsageError(`svc profile: unexpected argument ${rest[0]}\n${USAGE}`)
    const body = {
      ...(values.name !== undefined ? { name: values.name as string } : {}),
      ...(values.description !== undefined ? { description: values.description as string } : {}),
      ...(values.icon !== undefined ? { iconCid: values.icon as string } : {}),
    }
    switch (sub) {
      case 'get':
        if (Object.keys(body).length > 0) throw new UsageError(`svc profile: --name, --description and --icon belong to profile set\n${USAGE}`)
        return show(
          ctx,
          (c) => c.GET('/v1/account'),
          (d) => table(['ACCOUNT', 'NAME', 'DESCRIPTION', 'ICON'], [[d.accountId, d.name, d.description, d.iconCid]]),
        )
      case 'set': {
        if (Object.keys(body).length === 0) throw new UsageError(`svc profile set: give --name, --description or --icon\n${USAGE}`)
        const code = await show(ctx, (c) => c.PUT('/v1/account/metadata', { body }))
        if (code === EXIT.ok) io.stdout.write('profile updated\n')
        return code
      }
    }
    throw new UsageError(`svc profile: unknown subcommand ${sub}\n${USAGE}`)
  },
}
