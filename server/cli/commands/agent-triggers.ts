import { Writable } from 'node:stream'
import { bundleChildId, bundleRootId } from '../../../sync/space/bundles/model.ts'
import { call, fetchApi, need, type ClientContext } from '../client.ts'
import { EXIT, UsageError } from '../io.ts'
import { table, terminalSafe } from '../table.ts'
import { enc, intOption, jsonOption } from './args.ts'

/**
 * `svc agents trigger ...`: the trigger records of a space (dataset `agent_triggers` on the
 * agents anchor, docs/agents.md "The record"), written through the main API's `/modify` so a
 * user does not write the JSON by hand. The anchor's id is a pure function of the space.
 */
/**
 * The anchor's and the general chat's ids, as sync/modules/agents/store.ts derives them (a test
 * checks they agree); not imported from there, so `svc agents` loads no engine code.
 */
export const anchorIdOf = (spaceId: string) => bundleChildId(spaceId, 'system:agents/v1', 'triggers')
const generalChatIdOf = (spaceId: string) => bundleRootId(spaceId, 'system:general-chat/v1')

export const TRIGGER_USAGE = `       svc agents trigger ls SPACE_ID                 the space's trigger records
       svc agents trigger create SPACE_ID ID --program SPEC WHEN [FIELDS]
       svc agents trigger edit SPACE_ID ID [WHEN] [FIELDS]   changes only what is given
       svc agents trigger rm SPACE_ID ID              deletes it (the id is not reusable)
  WHEN: --cron EXPR | --every SECONDS | --at TIME (ISO date or epoch seconds; once) |
        --chat OBJECT_ID|general (each new message of that chat) | --kind KIND --spec JSON
  FIELDS: --name NAME --program SPEC --program-hash HEX --args JSON --owner PEER_ID|''
        --enabled true|false --log-runs true|false --limits JSON --max-failures N
  trigger talks to the daemon's main API (--url, $SVC_URL), not the control API. An edit of a
  once trigger's time re-arms it.`

export const TRIGGER_OPTIONS = {
  kind: { type: 'string' },
  spec: { type: 'string' },
  cron: { type: 'string' },
  every: { type: 'string' },
  at: { type: 'string' },
  chat: { type: 'string' },
  name: { type: 'string' },
  'program-hash': { type: 'string' },
  owner: { type: 'string' },
  enabled: { type: 'string' },
  'log-runs': { type: 'string' },
  limits: { type: 'string' },
  'max-failures': { type: 'string' },
} as const

type Values = Record<string, string | boolean | undefined>

const bool = (name: string, v: string | boolean | undefined, usage: string): boolean | undefined => {
  if (v === undefined) return undefined
  if (v === 'true' || v === 'false') return v === 'true'
  throw new UsageError(`--${name} takes true or false\n${usage}`)
}

/** `--at`: epoch seconds, or a date Date.parse reads (ISO 8601), as epoch seconds. */
function atSeconds(at: string, usage: string): number {
  if (/^\d+(\.\d+)?$/.test(at)) return Number(at)
  const ms = Date.parse(at)
  if (Number.isNaN(ms)) throw new UsageError(`--at takes an ISO date or epoch seconds (got ${at})\n${usage}`)
  return Math.floor(ms / 1000)
}

/** `{kind, spec}` from the WHEN options, or undefined when none is given. */
function when(spaceId: string, v: Values, usage: string): { kind: string; spec: unknown } | undefined {
  const given = (['cron', 'every', 'at', 'chat', 'kind'] as const).filter((k) => v[k] !== undefined)
  if (given.length > 1) throw new UsageError(`give one of --cron, --every, --at, --chat or --kind (got ${given.map((g) => `--${g}`).join(', ')})\n${usage}`)
  if (v.spec !== undefined && v.kind === undefined) throw new UsageError(`--spec goes with --kind\n${usage}`)
  switch (given[0]) {
    case 'cron':
      return { kind: 'cron', spec: v.cron }
    case 'every':
      return { kind: 'cron', spec: { every_s: intOption('every', v.every, usage) } }
    case 'at':
      return { kind: 'once', spec: { at: atSeconds(v.at as string, usage) } }
    case 'chat':
      return { kind: 'event', spec: { dataset: 'chat_messages', objectId: v.chat === 'general' ? generalChatIdOf(spaceId) : v.chat } }
    case 'kind': {
      if (v.spec === undefined) throw new UsageError(`--kind needs --spec JSON\n${usage}`)
      let spec: unknown
      try {
        spec = JSON.parse(v.spec as string)
      } catch {
        throw new UsageError(`--spec must be JSON\n${usage}`)
      }
      return { kind: v.kind as string, spec }
    }
  }
  return undefined
}

/** The definition fields the options give (without kind and spec). */
function fields(v: Values, usage: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (v.name !== undefined) out.name = v.name
  if (v.program !== undefined) out.program = v.program
  if (v['program-hash'] !== undefined) out.programHash = v['program-hash']
  const args = jsonOption('args', v.args, usage)
  if (args !== undefined) out.args = args
  if (v.owner !== undefined) out.owner = v.owner
  const enabled = bool('enabled', v.enabled, usage)
  if (enabled !== undefined) out.enabled = enabled
  const logRuns = bool('log-runs', v['log-runs'], usage)
  if (logRuns !== undefined) out.logRuns = logRuns
  const limits = jsonOption('limits', v.limits, usage)
  if (limits !== undefined) out.limits = limits
  const max = intOption('max-failures', v['max-failures'], usage)
  if (max !== undefined) out.maxConsecutiveFailures = max
  return out
}

interface TriggerRow {
  id: string
  name?: string
  kind?: string
  spec?: unknown
  program?: string
  owner?: string
  enabled?: boolean
  lastStatus?: string
  lastRunAt?: number
}

/** The space's trigger records; `rows` undefined when the space has no anchor yet (404 object.not_found). */
async function records(ctx: ClientContext, spaceId: string): Promise<{ ok: true; rows: TriggerRow[] | undefined } | { ok: false; code: number }> {
  let said = ''
  const sink = new Writable({
    write(c: Buffer, _e, cb) {
      said += c.toString()
      cb()
    },
  })
  const held = { ...ctx, io: { ...ctx.io, stderr: sink } }
  const r = await fetchApi(held, (c) =>
    c.POST('/v1/spaces/{spaceId}/query', {
      params: { path: { spaceId } },
      // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- a snapshot body the server's schema checks; the generated type spells every optional key
      body: { objectId: anchorIdOf(spaceId), dataset: 'agent_triggers', sort: ['id'], limit: 1000 } as never,
    }),
  )
  if (r.ok) return { ok: true, rows: r.data.records as unknown as TriggerRow[] }
  if (said.includes(' 404 object.not_found')) return { ok: true, rows: undefined }
  ctx.io.stderr.write(said)
  return r
}

const NO_ANCHOR =
  "this space has no agent triggers anchor yet: the daemon's agent installs it in a space with the general chat (svc catalog setup general-chat SPACE_ID) on the device that is the active agent (svc agents election)"

const showSpec = (spec: unknown) => (typeof spec === 'string' ? spec : JSON.stringify(spec))

/** Runs `svc agents trigger SUB SPACE_ID [ID]`; `v` holds every option of `svc agents`. */
export async function triggerCommand(ctx: ClientContext, positionals: string[], v: Values, usage: string): Promise<number> {
  const [sub, ...rest] = positionals
  const io = ctx.io
  switch (sub) {
    case 'ls': {
      const [spaceId] = need('agents trigger ls', rest, ['SPACE_ID'], usage) as [string]
      const got = await records(ctx, spaceId)
      if (!got.ok) return got.code
      const rows = got.rows ?? []
      if (ctx.json) io.stdout.write(JSON.stringify({ triggers: rows }, null, 2) + '\n')
      else
        io.stdout.write(
          table(
            ['ID', 'NAME', 'KIND', 'SPEC', 'PROGRAM', 'OWNER', 'ENABLED', 'LAST STATUS'],
            rows.map((t) => [t.id, t.name, t.kind, showSpec(t.spec), t.program, t.owner || '(floating)', t.enabled === true ? 'yes' : 'no', t.lastStatus ?? '']),
          ),
        )
      return EXIT.ok
    }
    case 'create':
    case 'edit': {
      const [spaceId, id] = need(`agents trigger ${sub}`, rest, ['SPACE_ID', 'ID'], usage) as [string, string]
      const w = when(spaceId, v, usage)
      const f = fields(v, usage)
      const got = await records(ctx, spaceId)
      if (!got.ok) return got.code
      if (got.rows === undefined) {
        io.stderr.write(`svc agents trigger ${sub}: ${NO_ANCHOR}\n`)
        return EXIT.user
      }
      const cur = got.rows.find((t) => t.id === id)
      const S = `/v1/spaces/${enc(spaceId)}`
      if (sub === 'create') {
        if (cur !== undefined) {
          io.stderr.write(terminalSafe(`svc agents trigger create: trigger ${id} exists; change it with svc agents trigger edit`) + '\n')
          return EXIT.user
        }
        if (w === undefined) throw new UsageError(`svc agents trigger create: say when it fires (--cron, --every, --at, --chat or --kind)\n${usage}`)
        if (f.program === undefined) throw new UsageError(`svc agents trigger create: missing --program SPEC\n${usage}`)
        const value = { name: id, args: {}, owner: '', enabled: true, logRuns: true, limits: {}, ...w, ...f }
        const code = await call(ctx, 'POST', `${S}/modify`, {
          body: { objectId: anchorIdOf(spaceId), dataset: 'agent_triggers', records: [{ id, upsert: true, ops: [{ type: '$set', path: '', value }] }] },
        })
        return code
      }
      if (cur === undefined) {
        io.stderr.write(terminalSafe(`svc agents trigger edit: no trigger ${id} in space ${spaceId} (svc agents trigger ls ${spaceId})`) + '\n')
        return EXIT.user
      }
      const set = { ...(w ?? {}), ...f }
      if (Object.keys(set).length === 0) throw new UsageError(`svc agents trigger edit: nothing to change\n${usage}`)
      const ops: unknown[] = Object.entries(set).map(([path, value]) => ({ type: '$set', path, value }))
      // A once trigger's `lastRunAt` is its consumed state: a new time re-arms it (chat.md States).
      if (w !== undefined && w.kind === 'once') ops.push({ type: '$unset', path: 'lastRunAt' })
      return call(ctx, 'POST', `${S}/modify`, { body: { objectId: anchorIdOf(spaceId), dataset: 'agent_triggers', records: [{ id, ops }] } })
    }
    case 'rm': {
      const [spaceId, id] = need('agents trigger rm', rest, ['SPACE_ID', 'ID'], usage) as [string, string]
      const got = await records(ctx, spaceId)
      if (!got.ok) return got.code
      if (got.rows?.some((t) => t.id === id) !== true) {
        io.stderr.write(terminalSafe(`svc agents trigger rm: no trigger ${id} in space ${spaceId}`) + '\n')
        return EXIT.user
      }
      return call(ctx, 'POST', `/v1/spaces/${enc(spaceId)}/delete-records`, { body: { objectId: anchorIdOf(spaceId), dataset: 'agent_triggers', recordIds: [id] } })
    }
  }
  throw new UsageError(`svc agents trigger: ${sub === undefined ? 'missing a subcommand' : `unknown subcommand ${sub}`} (ls, create, edit, rm)\n${usage}`)
}
