import { need, parseClientArgs, show } from '../client.ts'
import { UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { COMMON_HELP, intOption } from './args.ts'

const USAGE = `usage: svc history [list] SPACE_ID OBJECT_ID [--dataset D] [--record ID] [--author ID] [--limit N] [--cursor VERSION] [--coalesce]
       svc history diff SPACE_ID OBJECT_ID VERSION [--base VERSION] [--dataset D]
       svc history at SPACE_ID OBJECT_ID VERSION [--dataset D]
       svc history record SPACE_ID OBJECT_ID VERSION DATASET RECORD_ID
  A version is a change id. list: newest first (version, time, author, datasets, records, ops;
  @row is the object's own fields: --dataset @row lists only those changes);
  the last line names the cursor of the next page. diff: what a version changed; at: the
  object's state at a version; record: one record at a version. Those three print JSON.
${COMMON_HELP}`

const SUBCOMMANDS = new Set(['list', 'diff', 'at', 'record'])

interface ChangeRow {
  version: string
  author: string
  timestamp?: { $date: string }
  datasets: string[]
  recordIds: { dataset: string; id: string }[]
  opCount: number
}

const short = (id: string) => (id.length > 12 ? id.slice(0, 12) + '…' : id)

export const historyCommand: Command = {
  name: 'history',
  summary: "an object's changes, a version's diff, the state at a version",
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      {
        dataset: { type: 'string' },
        record: { type: 'string' },
        author: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        coalesce: { type: 'boolean' },
        base: { type: 'string' },
      },
      io,
      USAGE,
    )
    const [sub, ...rest] = positionals[0] !== undefined && SUBCOMMANDS.has(positionals[0]) ? positionals : ['list', ...positionals]
    const dataset = values.dataset as string | undefined
    switch (sub) {
      case 'list': {
        const [spaceId, objectId] = need('history', rest, ['SPACE_ID', 'OBJECT_ID'], USAGE) as [string, string]
        const limit = intOption('limit', values.limit, USAGE)
        const query = {
          ...(dataset !== undefined ? { dataset } : {}),
          ...(values.record !== undefined ? { recordId: values.record as string } : {}),
          ...(values.author !== undefined ? { author: values.author as string } : {}),
          ...(values.cursor !== undefined ? { cursor: values.cursor as string } : {}),
          ...(limit !== undefined ? { limit } : {}),
          ...(values.coalesce === true ? { coalesce: true } : {}),
        }
        return show(
          ctx,
          (c) => c.GET('/v1/spaces/{spaceId}/objects/{objectId}/history', { params: { path: { spaceId, objectId }, query } }),
          (d) => {
            const { changes, cursor } = d as { changes: ChangeRow[]; cursor?: string | null }
            const rows = changes.map((c) => [
              c.version,
              c.timestamp?.$date ?? '',
              short(c.author),
              // The object's own fields (name, values) are the row record: dataset "" and id "",
              // shown as the alias the history routes take for them (docs/api.md).
              c.datasets.map((n) => (n === '' ? '@row' : n)).join(','),
              c.recordIds.map((r) => (r.id === '' ? '@row' : r.id)).join(','),
              c.opCount,
            ])
            return table(['VERSION', 'TIME', 'AUTHOR', 'DATASETS', 'RECORDS', 'OPS'], rows) + (cursor ? `next page: --cursor ${cursor}\n` : '')
          },
        )
      }
      case 'diff': {
        const [spaceId, objectId, version] = need('history diff', rest, ['SPACE_ID', 'OBJECT_ID', 'VERSION'], USAGE) as [string, string, string]
        const query = { version, ...(values.base !== undefined ? { base: values.base as string } : {}), ...(dataset !== undefined ? { dataset } : {}) }
        return show(ctx, (c) => c.GET('/v1/spaces/{spaceId}/objects/{objectId}/history/diff', { params: { path: { spaceId, objectId }, query } }))
      }
      case 'at': {
        const [spaceId, objectId, version] = need('history at', rest, ['SPACE_ID', 'OBJECT_ID', 'VERSION'], USAGE) as [string, string, string]
        return show(ctx, (c) =>
          c.GET('/v1/spaces/{spaceId}/objects/{objectId}/history/{version}', { params: { path: { spaceId, objectId, version }, query: dataset !== undefined ? { dataset } : {} } }),
        )
      }
      case 'record': {
        const [spaceId, objectId, version, ds, recordId] = need('history record', rest, ['SPACE_ID', 'OBJECT_ID', 'VERSION', 'DATASET', 'RECORD_ID'], USAGE) as [
          string,
          string,
          string,
          string,
          string,
        ]
        return show(ctx, (c) =>
          c.GET('/v1/spaces/{spaceId}/objects/{objectId}/history/{version}/datasets/{dataset}/records/{recordId}', {
            params: { path: { spaceId, objectId, version, dataset: ds, recordId } },
          }),
        )
      }
    }
    throw new UsageError(USAGE)
  },
}
