import { call, need, parseClientArgs } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { assignment, COMMON_HELP, enc } from './args.ts'

const USAGE = `usage: svc modify SPACE OBJECT DATASET --record ID [--set PATH=VALUE ...] [--unset PATH ...] [--local]
  VALUE is JSON when it parses as JSON (42, true, "x", {"a":1}), else the literal text
  --local writes device-local fields (declared scope: local): kept on this device, never synced
${COMMON_HELP}`

export const modifyCommand: Command = {
  name: 'modify',
  summary: 'set or unset fields of one record (prints the write result)',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      { record: { type: 'string' }, set: { type: 'string', multiple: true }, unset: { type: 'string', multiple: true }, local: { type: 'boolean' } },
      io,
      USAGE,
    )
    need('modify', positionals, ['SPACE_ID', 'OBJECT_ID', 'DATASET'], USAGE)
    if (values.record === undefined) throw new UsageError(`svc modify: missing --record ID\n${USAGE}`)
    const [space, objectId, dataset] = positionals
    const ops = [
      ...((values.set as string[] | undefined) ?? []).map((a) => ({ type: '$set', ...assignment(a, USAGE) })),
      ...((values.unset as string[] | undefined) ?? []).map((path) => ({ type: '$unset', path })),
    ]
    if (ops.length === 0) throw new UsageError(`give at least one --set or --unset\n${USAGE}`)
    return call(ctx, 'POST', `/v1/spaces/${enc(space)}/modify`, { body: { objectId, dataset, records: [{ id: values.record, ops }], ...(values.local ? { scope: 'local' } : {}) } })
  },
}
