import { parseClientArgs, show } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { loadSchema, resolveFilter } from '../xkeys.ts'
import { COMMON_HELP, intOption } from './args.ts'

const USAGE = `usage: svc aggregate SPACE_ID --pipeline JSON [--object OBJECT_ID --dataset DATASET] [--group-limit N] [--explain]
  Runs a pipeline ($match, $group, $sort, $limit, $skip, $project, $unwind, $count; docs/api.md
  "Aggregate") over the objects of a space, or with --object and --dataset over one object's
  dataset. Over objects, the paths of a leading $match may use xKeys (note.status).
  Prints the result records as a table (--json: the API's answer).
${COMMON_HELP}`

export const aggregateCommand: Command = {
  name: 'aggregate',
  summary: 'run an aggregation pipeline over objects or a dataset',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      { pipeline: { type: 'string' }, object: { type: 'string' }, dataset: { type: 'string' }, 'group-limit': { type: 'string' }, explain: { type: 'boolean' } },
      io,
      USAGE,
    )
    if (positionals.length === 0) throw new UsageError(`svc aggregate: missing SPACE_ID\n${USAGE}`)
    if (positionals.length > 1) throw new UsageError(`svc aggregate: unexpected argument ${positionals[1]}\n${USAGE}`)
    if (values.pipeline === undefined) throw new UsageError(`svc aggregate: missing --pipeline\n${USAGE}`)
    if ((values.object === undefined) !== (values.dataset === undefined)) throw new UsageError(`svc aggregate: --object and --dataset go together\n${USAGE}`)
    const spaceId = positionals[0]
    let pipeline: unknown
    try {
      pipeline = JSON.parse(values.pipeline as string)
    } catch {
      throw new UsageError(`svc aggregate: --pipeline must be JSON\n${USAGE}`)
    }
    if (!Array.isArray(pipeline)) throw new UsageError(`svc aggregate: --pipeline must be a JSON array of stages\n${USAGE}`)
    const groupLimit = intOption('group-limit', values['group-limit'], USAGE)
    const common = { pipeline, ...(groupLimit !== undefined ? { groupLimit } : {}), ...(values.explain === true ? { explain: true } : {}) }
    const render = (d: unknown) => {
      const records = (d as { records?: Record<string, unknown>[] }).records
      if (!records) return JSON.stringify(d, null, 2) + '\n'
      const keys = [...new Set(records.flatMap((r) => Object.keys(r)))]
      return table(
        keys.map((k) => k.toUpperCase()),
        records.map((r) => keys.map((k) => r[k])),
      )
    }
    if (values.object !== undefined) {
      const body = { ...common, objectId: values.object as string, dataset: values.dataset as string }
      return show(ctx, (c) => c.POST('/v1/spaces/{spaceId}/aggregate', { params: { path: { spaceId } }, body: body as never }), render)
    }
    const first = pipeline[0] as Record<string, unknown> | undefined
    if (first && typeof first.$match === 'object' && first.$match !== null && !Array.isArray(first.$match)) {
      const schema = await loadSchema(ctx, spaceId)
      if (typeof schema === 'number') return schema
      pipeline[0] = { $match: resolveFilter(schema, first.$match as Record<string, unknown>) }
    }
    return show(ctx, (c) => c.POST('/v1/spaces/{spaceId}/objects/aggregate', { params: { path: { spaceId } }, body: common as never }), render)
  },
}
