import { fetchApi, need, parseClientArgs, reportError, show, type ClientContext } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { table } from '../table.ts'
import { describePath, loadSchema, resolveFilter, resolvePath, resolveType, type SpaceSchema } from '../xkeys.ts'
import { assignment, COMMON_HELP, intOption, jsonOption, WINDOW_OPTIONS } from './args.ts'

const USAGE = `usage: svc objects create SPACE_ID [--type TYPE ...] [--name NAME] [--set PATH=VALUE ...] [--props JSON]
       svc objects query SPACE_ID [--filter JSON] [--sort PATH ...] [--limit N] [--offset N] [--total]
       svc objects get SPACE_ID OBJECT_ID
       svc objects set SPACE_ID OBJECT_ID PATH=VALUE ...
       svc objects delete SPACE_ID OBJECT_ID
  TYPE is a type id, xKey or name. PATH is TYPE.PROPERTY (note.status, core.name), a property
  key one type has (status), or ids; "ambiguous" means several types have it: write TYPE.KEY.
  VALUE is JSON when it parses as JSON (42, true, "x", {"$date":"..."}), else the literal text.
  --sort -PATH sorts descending. --props: initialProperties by type key, e.g. '{"core":{"tags":["a"]}}'.
  create prints the new object's id; query and get a table (id, name, types, values by key).
${COMMON_HELP}`

/** `PATH=VALUE` pairs grouped by type id: `{typeId: {propId: value}}` (core keeps its keys). */
function groupValues(schema: SpaceSchema, pairs: string[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {}
  for (const pair of pairs) {
    const { path, value } = assignment(pair, USAGE)
    const [typeId, propId, ...rest] = resolvePath(schema, path).split('.')
    if (propId === undefined || rest.length > 0 || !schema.types.some((t) => t.id === typeId)) {
      throw new UsageError(`svc objects: ${path} is not TYPE.PROPERTY of this space\n${USAGE}`)
    }
    ;(out[typeId] ??= {})[propId] = value
  }
  return out
}

/** Rows as a table: id, name, types by xKey, then each other value under its readable path. */
function objectTable(schema: SpaceSchema, records: Record<string, unknown>[]): string {
  const typeIds = new Set(schema.types.map((t) => t.id))
  const columns: string[] = []
  for (const r of records) {
    for (const [k, v] of Object.entries(r)) {
      if (k === 'core' || !typeIds.has(k) || !v || typeof v !== 'object') continue
      for (const p of Object.keys(v)) if (!columns.includes(`${k}.${p}`)) columns.push(`${k}.${p}`)
    }
  }
  // Columns in the order the types and their properties are defined, whatever the rows' key order.
  const rank = (c: string) => {
    const [t, p] = c.split('.')
    const ti = schema.types.findIndex((x) => x.id === t)
    return ti * 10_000 + schema.types[ti].props.findIndex((x) => x.id === p)
  }
  columns.sort((a, b) => rank(a) - rank(b))
  const rows = records.map((r) => {
    const core = (r.core ?? {}) as { name?: string; types?: string[] }
    const values = columns.map((c) => {
      const [t, p] = c.split('.')
      return ((r[t] ?? {}) as Record<string, unknown>)[p]
    })
    return [r.id, core.name ?? '', (core.types ?? []).map((t) => describePath(schema, t)).join(','), ...values]
  })
  return table(['ID', 'NAME', 'TYPES', ...columns.map((c) => describePath(schema, c))], rows)
}

async function schemaOf(ctx: ClientContext, spaceId: string): Promise<SpaceSchema | number> {
  return loadSchema(ctx, spaceId)
}

export const objectsCommand: Command = {
  name: 'objects',
  summary: 'create, query, show, set values of or delete objects',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      {
        type: { type: 'string', multiple: true },
        name: { type: 'string' },
        props: { type: 'string' },
        set: { type: 'string', multiple: true },
        total: { type: 'boolean' },
        ...WINDOW_OPTIONS,
      },
      io,
      USAGE,
    )
    const [sub, ...rest] = positionals
    if (sub === undefined) throw new UsageError(`svc objects: missing a subcommand (create, query, get, set, delete)\n${USAGE}`)
    switch (sub) {
      case 'create': {
        const [spaceId] = need('objects create', rest, ['SPACE_ID'], USAGE) as [string]
        const schema = await schemaOf(ctx, spaceId)
        if (typeof schema === 'number') return schema
        const types = ((values.type as string[] | undefined) ?? []).map((t) => resolveType(schema, t))
        const props = (jsonOption('props', values.props, USAGE) ?? {}) as Record<string, Record<string, unknown>>
        for (const [typeId, vals] of Object.entries(groupValues(schema, (values.set as string[] | undefined) ?? []))) props[typeId] = { ...(props[typeId] ?? {}), ...vals }
        if (values.name !== undefined) props.core = { ...(props.core ?? {}), name: values.name }
        // A value of a type implies the type.
        for (const key of Object.keys(props)) if (key !== 'core' && !types.includes(key)) types.push(key)
        const body = { ...(types.length ? { types } : {}), ...(Object.keys(props).length ? { initialProperties: props } : {}) }
        return show(
          ctx,
          (c) => c.POST('/v1/spaces/{spaceId}/objects', { params: { path: { spaceId } }, body }),
          (d) => `${d.objectId}\n`,
        )
      }
      case 'query':
      case 'get': {
        const [spaceId, objectId] = need(`objects ${sub}`, rest, sub === 'get' ? ['SPACE_ID', 'OBJECT_ID'] : ['SPACE_ID'], USAGE) as [string, string | undefined]
        const schema = await schemaOf(ctx, spaceId)
        if (typeof schema === 'number') return schema
        const body: Record<string, unknown> = {}
        if (sub === 'get') {
          body.filter = { id: objectId }
          body.limit = 1
        } else {
          const filter = jsonOption('filter', values.filter, USAGE)
          if (filter) body.filter = resolveFilter(schema, filter)
          const sort = (values.sort as string[] | undefined) ?? []
          if (sort.length) body.sort = sort.map((s) => resolvePath(schema, s))
          const limit = intOption('limit', values.limit, USAGE)
          if (limit !== undefined) body.limit = limit
          const offset = intOption('offset', values.offset, USAGE)
          if (offset !== undefined) body.offset = offset
          if (values.total === true) body.includeTotal = true
        }
        if (sub === 'get') {
          const r = await fetchApi(ctx, (c) => c.POST('/v1/spaces/{spaceId}/objects/query', { params: { path: { spaceId } }, body }))
          if (!r.ok) return r.code
          const records = r.data.records as Record<string, unknown>[]
          // No such object is an error (exit 1, the API's envelope shape on stderr), not an empty answer.
          if (records.length === 0) return reportError(ctx, 404, { error: { code: 'object.not_found', message: `no object ${objectId} in space ${spaceId}` } })
          ctx.io.stdout.write(ctx.json ? JSON.stringify(r.data, null, 2) + '\n' : objectTable(schema, records))
          return EXIT.ok
        }
        return show(
          ctx,
          (c) => c.POST('/v1/spaces/{spaceId}/objects/query', { params: { path: { spaceId } }, body }),
          (d) => {
            const records = d.records as Record<string, unknown>[]
            return objectTable(schema, records) + (d.total !== undefined ? `total ${d.total}\n` : '') + (d.hasNext ? '(more: raise --limit or use --offset)\n' : '')
          },
        )
      }
      case 'set': {
        if (rest.length < 3) need('objects set', rest, ['SPACE_ID', 'OBJECT_ID', 'PATH=VALUE'], USAGE)
        const [spaceId, objectId, ...pairs] = rest as [string, string, ...string[]]
        const schema = await schemaOf(ctx, spaceId)
        if (typeof schema === 'number') return schema
        let code = 0
        // One typed set per type key (the route's unit); each is one change.
        for (const [typeKey, vals] of Object.entries(groupValues(schema, pairs))) {
          code = await show(
            ctx,
            (c) => c.POST('/v1/spaces/{spaceId}/properties/{objectId}/set/{typeKey}', { params: { path: { spaceId, objectId, typeKey } }, body: vals }),
            (d) => `${d.changeId}\n`,
          )
          if (code !== 0) return code
        }
        return code
      }
      case 'delete': {
        const [spaceId, objectId] = need('objects delete', rest, ['SPACE_ID', 'OBJECT_ID'], USAGE) as [string, string]
        return show(ctx, (c) => c.DELETE('/v1/spaces/{spaceId}/objects/{objectId}', { params: { path: { spaceId, objectId } } }))
      }
    }
    throw new UsageError(`svc objects: unknown subcommand ${sub}\n${USAGE}`)
  },
}
