import { call, parseClientArgs, show } from '../client.ts'
import { table } from '../table.ts'
import { UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc } from './args.ts'

const USAGE = `usage: svc members [list] SPACE_ID [--all]
       svc members set SPACE_ID IDENTITY reader|writer|admin
       svc members add SPACE_ID IDENTITY... [--permission reader|writer|admin]
       svc members remove SPACE_ID IDENTITY        (rotates the read key)
       svc members accept SPACE_ID IDENTITY        (a pending join request)
       svc members decline SPACE_ID IDENTITY
  list shows members and pending join requests; --all adds removed members and settled requests.
${COMMON_HELP}`

const SUBCOMMANDS = new Set(['list', 'set', 'add', 'remove', 'accept', 'decline'])

export const membersCommand: Command = {
  name: 'members',
  summary: 'list members of a space, change roles, add, remove, decide join requests',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { all: { type: 'boolean' }, permission: { type: 'string' } }, io, USAGE)
    const [first, ...others] = positionals
    const [sub, spaceId, ...rest] = first !== undefined && SUBCOMMANDS.has(first) ? [first, ...others] : ['list', ...positionals]
    if (spaceId === undefined) throw new UsageError(`svc members ${sub}: missing SPACE_ID\n${USAGE}`)
    const S = `/v1/spaces/${enc(spaceId)}`
    if (sub !== 'list' && values.all) throw new UsageError(USAGE)
    if (sub !== 'add' && values.permission !== undefined) throw new UsageError(USAGE)
    switch (sub) {
      case 'list':
        if (rest.length > 0) break
        // A table (IDENTITY, NAME, ROLE, STATUS, REQUEST); --json prints the API's JSON.
        return show(
          ctx,
          (c) => c.GET('/v1/spaces/{spaceId}/members', { params: { path: { spaceId }, query: values.all ? { status: 'all' } : {} } }),
          (d) =>
            table(
              ['IDENTITY', 'NAME', 'ROLE', 'STATUS', 'REQUEST'],
              d.members.map((m) => [
                m.self ? `${m.identity} (you)` : m.identity,
                m.name,
                m.role,
                m.status,
                m.request ? `${m.request.status} ${m.request.permission} ${m.request.recordId}` : '',
              ]),
            ),
        )
      case 'set':
        if (rest.length !== 2) break
        return call(ctx, 'PATCH', `${S}/members/${enc(rest[0])}`, { body: { role: rest[1] } })
      case 'add':
        if (rest.length === 0) break
        return call(ctx, 'POST', `${S}/acl/add`, { body: { identities: rest, permission: values.permission ?? 'reader' } })
      case 'remove':
        if (rest.length !== 1) break
        return call(ctx, 'DELETE', `${S}/members/${enc(rest[0])}`)
      case 'accept':
      case 'decline':
        if (rest.length !== 1) break
        return call(ctx, 'POST', `${S}/acl/${sub}`, { body: { identity: rest[0] } })
    }
    throw new UsageError(USAGE)
  },
}
